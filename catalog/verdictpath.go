package catalog

import (
	"fmt"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// This file is the path decision as Classify and PathOf take it: the
// incident kind decides where frames cannot (pathByKind), else the path
// rules over the stack view (decidePath in path.go), and a thread dump that
// matched a defect takes the defect's path (pathFromDefect).

// pathByKind decides the path from the incident kind where frames cannot:
// a termination dump (the process was told to stop), a leak report (printed
// at exit) and a thread dump (no crashing thread). It reports whether it did.
func pathByKind(v *Verdict, crash *symbolize.Crash) bool {
	switch crash.Kind {
	case symbolize.KindTermination:
		v.Path, v.Area, v.PathConfidence = PathLifecycle, "termination", ConfidenceHigh
		v.Evidence = append(v.Evidence, "path lifecycle/termination: a SIGTERM/SIGINT dump means the process was told to stop; its frames show where the thread was, not a fault")
	case symbolize.KindLeak:
		v.Path, v.Area, v.PathConfidence = PathLifecycle, "leak-report", ConfidenceHigh
		v.Evidence = append(v.Evidence, "path lifecycle/leak-report: LeakSanitizer reports at process exit")
	case symbolize.KindThreadDump:
		v.Path, v.Area, v.PathConfidence = PathUnknown, "", ConfidenceLow
		v.Evidence = append(v.Evidence, "path unknown: a thread dump is diagnostics with no crashing thread (a matched defect may place it)")
	default:
		return false
	}
	return true
}

// PathOf returns the path and area of a crash without matching defects
// (cheaper than Classify). It is the grouping `crashsig buckets` puts
// before the signature key: bucket by PathOf, then by key. Safe for
// concurrent use.
func (c *Catalog) PathOf(crash *symbolize.Crash) (Path, string) {
	if crash == nil {
		return PathUnknown, ""
	}
	var v Verdict
	if !pathByKind(&v, crash) {
		c.decidePath(&v, crash, c.view(crash, Frames(crash), signature.Signature{}))
	}
	return v.Path, v.Area
}

// pathFromDefect places a thread dump (no crashing thread, path unknown by
// pathByKind) on the path of the defect it matched, if the entry names one.
func (c *Catalog) pathFromDefect(v *Verdict, crash *symbolize.Crash) {
	if crash.Kind == symbolize.KindThreadDump && v.Defect != nil {
		if d, ok := c.Defect(v.Defect.ID); ok && d.Path != "" {
			v.Path, v.Area, v.PathConfidence = d.Path, d.Area, ConfidenceMedium
			v.Evidence = append(v.Evidence, fmt.Sprintf("path %s/%s from the matched defect %s: a thread dump has no crashing thread to place", d.Path, d.Area, d.ID))
		}
	}
}
