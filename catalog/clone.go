package catalog

import "slices"

// A Catalog is immutable: what goes in (the Files given to New and Merge)
// and what comes out (Defects, Defect, Rules, a Verdict's DefectRef) are
// copies down to their slices, so a caller writing into one changes
// neither the catalog nor a later verdict, and does not race with
// classifications running concurrently.

// clone returns d with its own exported slices (the compiled version
// ranges are read-only and shared, as Match.clone shares its globs).
func (d Defect) clone() Defect {
	d.Match = slices.Clone(d.Match)
	for i := range d.Match {
		d.Match[i] = d.Match[i].clone()
	}
	d.Affected, d.Fixed, d.FixedLikely = slices.Clone(d.Affected), slices.Clone(d.Fixed), slices.Clone(d.FixedLikely)
	d.Links, d.Tests, d.TaughtBy = slices.Clone(d.Links), slices.Clone(d.Tests), slices.Clone(d.TaughtBy)
	return d
}

// clone returns m with its own slices (the compiled globs and regular
// expressions are read-only and shared).
func (m Match) clone() Match {
	m.Frames, m.Callers, m.Near = slices.Clone(m.Frames), slices.Clone(m.Callers), slices.Clone(m.Near)
	m.AnyThread, m.Attrs, m.Types = slices.Clone(m.AnyThread), slices.Clone(m.Attrs), slices.Clone(m.Types)
	if m.Threads != nil {
		t := *m.Threads
		t.Frames = slices.Clone(t.Frames)
		m.Threads = &t
	}
	return m
}

// clone returns r with its own slices and targets.
func (r PathRule) clone() PathRule {
	for _, s := range []*[]string{&r.Frames, &r.Callers, &r.NotCallers, &r.Threads, &r.Files, &r.Modules, &r.Types,
		&r.QueryID, &r.TabletID, &r.FileLine, &r.TaskLabel, &r.FreedBy, &r.LogContext, &r.SanitizerBug, &r.TaughtBy} {
		*s = slices.Clone(*s)
	}
	if r.NoQuery != nil {
		t := *r.NoQuery
		r.NoQuery = &t
	}
	if r.OnThreads != nil {
		t := *r.OnThreads
		t.Threads = slices.Clone(t.Threads)
		r.OnThreads = &t
	}
	return r
}

func cloneDefects(ds []Defect) []Defect {
	out := make([]Defect, len(ds))
	for i := range ds {
		out[i] = ds[i].clone()
	}
	return out
}

func cloneRules(rs []PathRule) []PathRule {
	out := make([]PathRule, len(rs))
	for i := range rs {
		out[i] = rs[i].clone()
	}
	return out
}
