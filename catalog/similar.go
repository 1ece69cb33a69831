package catalog

import (
	"math"
	"sort"

	"github.com/crashsig/crashsig/signature"
)

// similar lists up to maxSimilar defects whose frame globs are found in the
// crashing stack, scored by signature.Similarity between the crash's meaningful
// frames and the defect's frames (each glob replaced by the frame it
// matched, so a glob and the name it matches count as equal). Only
// defects sharing at least one glob hit are scored: no scan of the catalog.
func (c *Catalog) similar(sv *stackView, sigFrames []string) []Similar {
	crash := sv.frames[sv.w0:sv.w1]
	if len(crash) == 0 {
		crash = sigFrames
	}
	best := map[int]Similar{}
	for _, a := range sortedUnique(c.altCandidates(sv, 1)) {
		ca := &c.calts[a]
		d := &c.defects[ca.defect]
		m := &d.Match[ca.alt]
		globs, texts := ca.frames, m.Frames
		if ca.anchor >= 0 { // an anchor alternative: the anchor is its frame
			globs, texts = append([]int32{ca.anchor}, ca.frames...), append([]string{m.Anchor}, m.Frames...)
		}
		b := make([]string, len(globs))
		var shared []string
		for k, g := range globs {
			b[k] = texts[k]
			if p := sv.has(g, sv.w0, sv.w1); p >= 0 {
				b[k] = sv.frames[p]
				shared = append(shared, texts[k])
			}
		}
		if len(shared) == 0 {
			continue
		}
		s := signature.Similarity(crash, b)
		if s <= 0 {
			continue
		}
		s = math.Round(s*100) / 100
		if prev, ok := best[ca.defect]; !ok || s > prev.Score {
			best[ca.defect] = Similar{ID: d.ID, Title: d.Title, Score: s, Shared: shared}
		}
	}
	out := make([]Similar, 0, len(best))
	for _, s := range best {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ID < out[j].ID
	})
	if len(out) > maxSimilar {
		out = out[:maxSimilar]
	}
	return out
}
