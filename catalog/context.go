package catalog

import (
	"strconv"
	"strings"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// Context evidence (issue 14): what the incident says beside its crashing
// stack that tells the path.
//
//   - freed_by: a sanitizer report's freed-by stacks (`freed by thread T1
//     here:`, kept as threads whose State names them). The crashing thread
//     of a use-after-free shows who used the memory; the freed-by stack
//     shows who freed it. When process teardown freed it (exit handlers,
//     static destructors, ~ExecEnv, ExecEnv::destroy, Daemon::stop), the
//     crash is teardown whatever the crashing thread was doing: a daemon,
//     report or GC thread still running while the process shuts down. The
//     thread-creation stacks (`Thread T5 created by T0 here:`) are not
//     read: every pool thread is created under main or ExecEnv::init.
//   - log_context: the last lifecycle log line the input printed before the
//     incident (symbolize.EventLifecycleLog: a start or exit step of the
//     backend, its signal-received and main-exiting messages). Restart
//     markers are lifecycle lines too (glog's `Log file created at:` header
//     of a new be.INFO, Doris' `Doris backend JNI is initialized.`): no
//     rule's glob matches them, so after a restart an exit line of the
//     earlier run is no longer the context, and the marker is no evidence.
//
// Both are conditions of a path rule; with frames ["*"] they are its
// evidence (weights weightFreedBy, weightLogContext and weightMainThread).

// freedByPrefix starts the State of a freed-by stack.
const freedByPrefix = "freed by "

// ctxHold is where a context condition held: the glob and the text it
// matched (a frame of a freed-by stack, a log line).
type ctxHold struct {
	glob string
	text string
	// where describes the text's place (`freed-by stack "freed by thread
	// T1 here", frame #3`, `log line 12`).
	where string
}

// compileGlobs compiles globs the decoder already checked.
func compileGlobs(ss []string) []glob {
	var out []glob
	for _, s := range ss {
		if g, err := compileGlob(s); err == nil {
			out = append(out, g)
		}
	}
	return out
}

// freedByHolds reports whether a frame of one of the crash's freed-by
// stacks matches one of globs, innermost frame first.
func freedByHolds(globs []glob, crash *symbolize.Crash) (ctxHold, bool) {
	if len(globs) == 0 || crash == nil {
		return ctxHold{}, false
	}
	var gen *signature.Generator
	for ti := range crash.Threads {
		t := &crash.Threads[ti]
		if t.Crashed || !strings.HasPrefix(t.State, freedByPrefix) {
			continue
		}
		if gen == nil {
			gen = signature.Default()
		}
		for fi := range t.Frames[:min(len(t.Frames), maxStack)] {
			f := &t.Frames[fi]
			if f.Java {
				continue
			}
			name := gen.Normalize(f.Name())
			if name == "" {
				continue
			}
			for i := range globs {
				if globs[i].match(name) {
					return ctxHold{glob: globs[i].text, text: name, where: "the sanitizer's " + strings.TrimSuffix(t.State, " here") + " stack, frame #" + strconv.Itoa(fi)}, true
				}
			}
		}
	}
	return ctxHold{}, false
}

// lastLifecycleLine returns the last lifecycle log line before the incident.
func lastLifecycleLine(crash *symbolize.Crash) (symbolize.Event, bool) {
	if crash == nil {
		return symbolize.Event{}, false
	}
	for i := len(crash.Events) - 1; i >= 0; i-- {
		if e := crash.Events[i]; e.Kind == symbolize.EventLifecycleLog && (crash.StartLine == 0 || e.Line <= crash.StartLine) {
			return e, true
		}
	}
	return symbolize.Event{}, false
}

// logContextHolds reports whether the last lifecycle log line before the
// incident matches one of globs.
func logContextHolds(globs []glob, crash *symbolize.Crash) (ctxHold, bool) {
	if len(globs) == 0 {
		return ctxHold{}, false
	}
	e, ok := lastLifecycleLine(crash)
	if !ok {
		return ctxHold{}, false
	}
	for i := range globs {
		if globs[i].match(e.Text) {
			return ctxHold{glob: globs[i].text, text: e.Text, where: "the last lifecycle log line before the incident (line " + strconv.Itoa(e.Line) + ")"}, true
		}
	}
	return ctxHold{}, false
}

// contextHolds checks a rule's context conditions; it returns the
// strongest context evidence that held (for the verdict's evidence line)
// and its source (srcFreedBy, srcLogContext, srcMainThread: its weight is
// the source's), or ok false when a condition fails. A rule without
// context conditions holds with source srcName.
func (cr *compiledRule) contextHolds(crash *symbolize.Crash) (h ctxHold, src evidenceSource, ok bool) {
	src = srcName
	var mh ctxHold
	if cr.mainThread {
		if mh, ok = mainThreadHolds(crash); !ok {
			return ctxHold{}, srcName, false
		}
	}
	if len(cr.sanBug) > 0 && (crash == nil || !anyGlob(cr.sanBug, crash.SanitizerBug)) {
		return ctxHold{}, srcName, false
	}
	if len(cr.freedBy) > 0 {
		fh, ok := freedByHolds(cr.freedBy, crash)
		if !ok {
			return ctxHold{}, srcName, false
		}
		h, src = fh, srcFreedBy
	}
	if len(cr.logContext) > 0 {
		lh, ok := logContextHolds(cr.logContext, crash)
		if !ok {
			return ctxHold{}, srcName, false
		}
		if src == srcName {
			h, src = lh, srcLogContext
		}
	}
	if cr.mainThread && src == srcName {
		h, src = mh, srcMainThread
	}
	return h, src, true
}

// hasContext says whether the rule has context conditions.
func (cr *compiledRule) hasContext() bool {
	return len(cr.freedBy) > 0 || len(cr.logContext) > 0 || len(cr.sanBug) > 0 || cr.mainThread
}

// mainThreadHolds reports whether the crash's crashing thread is its
// process's main thread: Linux gives a process's first thread the PID as
// its kernel thread id, and the dump headers print both (Doris `received
// by PID N (TID N OR 0x…)`, StarRocks 3.x `… (TID 0x…) LWP(N)`). The BE's
// main thread starts the process (ExecEnv init, storage open, JNI init),
// then only sleeps in main's `while (!k_doris_exit)` / `k_starrocks_exit`
// loop (Doris 1.x-2.0 also refreshes memory counters there:
// background-main-loop), then stops it (be/src/service/doris_main.cpp,
// starrocks_be.cpp).
func mainThreadHolds(crash *symbolize.Crash) (ctxHold, bool) {
	// pid_max is at most 2^22: a larger "PID" is no process id, and a
	// thread id the header gave as a pthread_t (glog's `TID 0x7f…`) is
	// larger still, so it never equals one.
	if crash == nil || crash.PID <= 0 || crash.PID >= 1<<22 {
		return ctxHold{}, false
	}
	if t := crash.CrashingThread(); t == nil || t.ID != crash.PID {
		return ctxHold{}, false
	}
	id := strconv.FormatInt(crash.PID, 10)
	return ctxHold{glob: "TID = PID", text: "TID " + id + " = PID " + id, where: "the dump header (the process's main thread)"}, true
}

// evidentAlone says whether the rule's conditions are evidence of their
// own, so that it holds on a text with no frame after the crash mechanism
// (a header- or preamble-only text, a dump cut at the signal handler): the
// preamble's file line, the task label, a freed-by stack, the last
// lifecycle log line, the main thread.
func (cr *compiledRule) evidentAlone() bool {
	return cr.fileLine != 0 || cr.taskLabel != 0 || len(cr.freedBy) > 0 || len(cr.logContext) > 0 || cr.mainThread
}

// anyGlob reports whether s is non-empty and matches one of globs.
func anyGlob(globs []glob, s string) bool {
	if s == "" {
		return false
	}
	for i := range globs {
		if globs[i].match(s) {
			return true
		}
	}
	return false
}
