package scan

import (
	"strings"
)

// finish turns the incident into a Crash: it picks the crashing stack,
// decides product and kind, and checks the result for damage.
func (in *incident) finish(p *parser) *Crash {
	c := in.c
	if in.versionOnly {
		return nil // a build line alone is not an incident
	}
	preamble := in.srPreambleOnly() // format_srcontext.go
	if !preamble && len(in.stacks) == 0 && c.Kind == KindUnknown && !in.hasSig && c.Message == "" && len(c.Formats) == 0 {
		return nil
	}
	if in.abortStackConflict() {
		n := in.splitAbortDump(p)
		if done := in.finish(p); done != nil {
			p.out = append(p.out, done)
		}
		return n.finish(p)
	}
	for i := 0; i < len(c.Events); i++ {
		if c.Events[i].Kind == carriedFrame { // handed over but not taken
			c.Events = append(c.Events[:i:i], c.Events[i+1:]...)
			i--
		}
	}
	if in.prefixedAt > 0 && in.prefixedAt <= c.EndLine && !in.sawPrefix {
		in.used(lineInfo{no: in.prefixedAt, prefixed: true})
	}
	in.sanitizerRun(p) // format_sanitizer.go: headerless sanitizer frames
	in.chooseThreads(p)
	in.decideProduct(p)
	in.decideKind()
	in.checkDamage()
	in.checkGDBCut()
	if preamble {
		in.finishSRPreamble()
	}
	if !in.finishFragment() {
		return nil
	}
	c.Notes = in.notes
	if c.Threads == nil {
		c.Threads = []Thread{}
	}
	for i := range c.Threads {
		if c.Threads[i].Frames == nil {
			c.Threads[i].Frames = []Frame{}
		}
	}
	return c
}

// chooseThreads decides the incident's thread list and its crashing thread.
func (in *incident) chooseThreads(p *parser) {
	c := in.c
	if c.Kind == KindThreadDump || in.sec == secGDB || in.hasFormat("F7") && !in.hasSig {
		in.dropGDBStopFrames()
		// Every stack is a thread; gdb marks the crashing one.
		crashed := -1
		if in.hasStack("coredump") {
			// systemd-coredump prints the thread that dumped first; the
			// kernel line's one frame is that thread's #0.
			kept := in.stacks[:0]
			var kernel *stack
			for _, s := range in.stacks {
				if s.origin == "kernel" {
					kernel = s
					continue
				}
				if kernel != nil && s.origin == "coredump" && s.th.ID == kernel.th.ID && s.th.Name == "" {
					s.th.Name = kernel.th.Name // the kernel line names the thread (its comm)
				}
				if s.origin == "coredump" && crashed < 0 {
					crashed = len(kept)
				}
				kept = append(kept, s)
			}
			in.stacks = kept
		}
		if crashed < 0 {
			// minidump_stackwalk prints the crashing (or dump-requesting)
			// thread first, marked; without the mark (a paste cut above
			// it) the first thread of a dump that crashed.
			for i, s := range in.stacks {
				if s.origin == "minidump" && (s.prio == 2 || c.Kind == KindSignal && i == 0) {
					crashed = i
					break
				}
			}
		}
		for i, s := range in.stacks {
			if in.gdbCur != 0 && s.th.ID == in.gdbCur {
				crashed = i
			}
		}
		if crashed < 0 && in.gdbSig {
			for i, s := range in.stacks {
				for _, f := range s.th.Frames {
					if f.Function == "<signal handler called>" {
						crashed = i
						break
					}
				}
				if crashed >= 0 {
					break
				}
			}
			if crashed < 0 && len(in.stacks) > 0 {
				crashed = 0 // `bt` of the current thread only
			}
		}
		if crashed < 0 && !in.gdbSig && (c.Kind == KindCheck || c.Kind == KindTerminate) {
			// gdb's backtrace of an abort cause (format_gdb.go
			// gdbAfterCause): the thread on the abort path crashed.
			crashed = in.abortingStack()
		}
		if crashed < 0 && len(in.stacks) == 1 && in.stacks[0].th.ID == 0 && in.stacks[0].th.Name == "" && in.sec == secGDB {
			// A lone `bt` without thread headers: the user printed the
			// stack of the crashing thread.
			crashed = 0
			if c.Kind == KindThreadDump || c.Kind == KindUnknown {
				c.Kind = KindSignal
				in.note("gdb backtrace without thread headers: taken as the crashing thread; the signal was not printed")
			}
		}
		for i, s := range in.stacks {
			th := s.th
			th.Crashed = i == crashed
			if th.Crashed {
				c.Threads = append([]Thread{th}, c.Threads...)
			} else {
				c.Threads = append(c.Threads, th)
			}
			// A group of threads with one stack: one Thread per id, all
			// sharing the frames.
			for _, id := range s.ids[min(1, len(s.ids)):] {
				if len(c.Threads) >= p.opts.MaxThreads {
					in.note("thread dump cut at %d threads", p.opts.MaxThreads)
					break
				}
				t := th
				t.ID, t.Crashed = id, false
				c.Threads = append(c.Threads, t)
			}
		}
		if crashed >= 0 && c.TID == 0 {
			c.TID = c.Threads[0].ID
		}
		return
	}
	in.chooseSanitizerCrash() // format_sanitizer.go
	// A crash: the best candidate stack is the crashing thread.
	if len(in.stacks) == 0 && in.pcFrame.Raw != "" {
		in.newStack("F2", 3) // cut after the PC: line
	}
	var best *stack
	for _, s := range in.stacks {
		if s.origin == "F6-aux" || s.origin == "api" || s.origin == twinStack {
			continue
		}
		if best == nil || better(s, best) {
			best = s
		}
	}
	best = in.keepCauseStack(best) // format_glog.go
	if best != nil && len(best.th.Frames) == 0 && best.origin == "F6" {
		// LeakSanitizer prints no access stack: the first allocation
		// stack is the one the report is about.
		for _, s := range in.stacks {
			if s.origin == "F6-aux" && len(s.th.Frames) > 0 {
				s.origin = "F6"
				best = s
				break
			}
		}
	}
	if best != nil {
		th := best.th
		th.Crashed = true
		if th.ID == 0 && c.TID != 0 {
			th.ID = c.TID
		}
		in.placePCFrame(&th)
		if in.cutBy != "" && in.unfinished(best, th.Frames) {
			// A complete dump ends at its thread's root (clone,
			// start_thread, main, glog's null frame) or with its own end
			// marker (F1's blank line); formats spec §4 F1.5, F2.5.
			th.Truncated = true
			if in.eof {
				in.note("input ended inside the dump: frames may be missing")
			}
			in.corrupt("dump cut by " + in.cutBy + ": no thread root frame and no end marker")
		}
		c.Threads = append(c.Threads, th)
		for _, s := range in.stacks {
			if s != best && s.origin != "F6-aux" && s.origin != twinStack && len(s.th.Frames) > 0 {
				in.note("%s stack (%d frames) of the same thread set aside for the %s stack", s.origin, len(s.th.Frames), best.origin)
			}
		}
	}
	// Sanitizer auxiliary stacks (freed by, allocated by, created by) and
	// a second failing thread's check-failure stack.
	for _, s := range in.stacks {
		if (s.origin == "F6-aux" || s.origin == twinStack) && len(s.th.Frames) > 0 && len(c.Threads) < p.opts.MaxThreads {
			th := s.th
			th.Crashed = false
			c.Threads = append(c.Threads, th)
		}
	}
}

// better reports whether stack a is a better crashing-thread source than b:
// a sanitizer's first stack with frames wins (an empty one, a UBSAN
// location or a report cut by a signal dump, does not), then the stack
// with more frames, then the
// higher source priority (boost dumps carry file:line).
func better(a, b *stack) bool {
	if af6, bf6 := a.origin == "F6" && len(a.th.Frames) > 0, b.origin == "F6" && len(b.th.Frames) > 0; af6 != bf6 {
		return af6
	}
	na, nb := len(a.th.Frames), len(b.th.Frames)
	if na != nb {
		// A signal dump usually repeats the check-failure frames with
		// more of the abort path; prefer it unless it was cut short.
		if a.prio != b.prio && na > 0 && nb > 0 && absInt(na-nb) <= 4 {
			return a.prio > b.prio
		}
		return na > nb
	}
	return a.prio > b.prio
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// decideProduct fills Product and Version from the dump's own evidence,
// then from the startup banner, then from frame namespaces and modules.
func (in *incident) decideProduct(p *parser) {
	c := in.c
	if c.Product == ProductUnknown {
		if in.family == "F1" || c.IsNereids != "" || c.TabletID != "" || (c.Build != "" && in.family == "F1") {
			c.Product = ProductDoris
		}
	}
	if c.Product == ProductUnknown || c.Product == p.banner.product {
		if c.Version == "" && p.banner.version != "" {
			c.Version = p.banner.version
			c.VersionFromBanner = true
			if c.Build == "" {
				c.Build = p.banner.build
			}
			if c.BuildType == "" {
				c.BuildType = p.banner.btype
			}
			if c.Product == ProductUnknown {
				c.Product = p.banner.product
			}
		}
	}
	if c.Product != ProductUnknown {
		return
	}
	c.Product = ProductFromFrames(c)
}

// ProductFromFrames decides the product of a crash from its evidence when
// nothing stated it: namespaces of frames (`doris::`, `starrocks::` and
// the StarRocks-only libraries `starcache::`, `staros::`, Java packages)
// and module names (`doris_be`, `palo_be`, `starrocks_be`), then
// event texts. Unknown when neither wins.
func ProductFromFrames(c *Crash) Product {
	doris, sr := 0, 0
	for _, th := range c.Threads {
		for i := range th.Frames {
			f := &th.Frames[i]
			n := f.Name()
			switch {
			case strings.Contains(n, "doris::"), strings.Contains(n, "palo::"), strings.Contains(n, "org.apache.doris"):
				doris++
			case strings.Contains(n, "starrocks::"), strings.Contains(n, "com.starrocks"),
				strings.HasPrefix(n, "starcache::"), strings.HasPrefix(n, "staros::"):
				// StarCache (the data cache library, `starcache::` before it
				// moved under starrocks::) and StarOS/starlet (shared-data)
				// are linked into starrocks_be only.
				sr++
			}
			switch {
			case strings.HasSuffix(f.Module, "doris_be"), strings.HasSuffix(f.Module, "palo_be"):
				doris++
			case strings.HasSuffix(f.Module, "starrocks_be"):
				sr++
			}
		}
	}
	for _, e := range c.Events {
		if containsAny(e.Text, srEventWords) {
			sr++
		}
		if containsAny(e.Text, dorisEventWords) {
			doris++
		}
	}
	switch {
	case doris > sr:
		return ProductDoris
	case sr > doris:
		return ProductStarRocks
	}
	return ProductUnknown
}

// srEventWords and dorisEventWords name a product in the text of an event
// (a shell's or supervisord's report of the death, a context line): the
// binaries, the start scripts' variables and files (StarRocks
// bin/start_backend.sh runs ${START_BE_CMD}, start_cn.sh starts a CN; Doris
// bin/start_be.sh runs ${DORIS_HOME}/lib/doris_be, palo_be before 1.2) and
// the program names of StarRocks' allin1 images under supervisord.
var (
	srEventWords    = []string{"starrocks_be", "STARROCKS_HOME", "START_BE_CMD", "start_backend.sh", "start_cn.sh", "exited: beservice", "exited: cnservice"}
	dorisEventWords = []string{"doris_be", "palo_be", "DORIS_HOME"}
)

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// decideKind settles the incident kind from its parts.
func (in *incident) decideKind() {
	c := in.c
	switch c.Kind {
	case KindUnknown:
		switch {
		case c.Signal != "":
			c.Kind = KindSignal
		case in.family == "F1" || in.family == "F2" || in.hasFormat("F1") || in.hasFormat("F2"):
			// A signal dump whose header lines were cut off the paste.
			c.Kind = KindSignal
			in.note("signal dump without its signal line: the signal is unknown")
		}
	case KindAssert:
		if c.SanitizerBug != "" {
			c.Kind = KindSanitizer
		}
	}
	if c.Kind == KindSignal && (c.Signal == "SIGTERM" || c.Signal == "SIGINT") && c.Message == "" {
		c.Kind = KindTermination
	}
	if c.Signal == "" && (c.Kind == KindCheck || c.Kind == KindTerminate || c.Kind == KindAssert) {
		in.note("no signal dump followed (cut paste, or the process died without one)")
	}
}

// checkDamage marks incidents whose text cannot be trusted whole.
func (in *incident) checkDamage() {
	c := in.c
	ct := c.CrashingThread()
	switch {
	case c.Kind == KindThreadDump || c.Kind == KindLeak:
	case ct == nil || len(ct.Frames) == 0:
		if c.Kind == KindSignal && len(in.stacks) == 0 && in.hasFormat("F9") {
			break
		}
		if c.Kind == KindSignal || c.Kind == KindSanitizer && c.SanitizerBug != "" && !strings.Contains(c.Message, "runtime error") && !in.sanNoStack {
			in.corrupt("no frames: the dump was cut before its stack")
		}
	case len(ct.Frames) < 3 && (in.hasSig || c.Kind == KindCheck) && !in.hasFormat("F9"):
		in.corrupt("fewer than 3 frames: the dump was cut short")
	}
	if in.glogNoHeader && c.Signal == "" && !c.Corrupted {
		// glog prints `*** Aborted at …`, `PC:` and the signal line before
		// its `@` frames: frames without them are the tail of a dump whose
		// head the paste or the log lost, like a headerless boost or gdb
		// fragment.
		in.corrupt("glog stack without its dump header (fragment): the signal and the frames above the first are missing")
	}
	if in.interleaved > 0 {
		in.note("%d foreign lines interleaved with the dump", in.interleaved)
	}
}

// placePCFrame makes sure the faulting frame printed on the glog `PC:` line
// is in the crashing thread: pastes are often cut after the handler frames,
// and abbreviated pastes print frames without addresses. The frame is
// printed evidence, not an invention; its position is after the frames
// already there when the stack holds the handler (the dump was cut), else
// first.
func (in *incident) placePCFrame(th *Thread) {
	pf := in.pcFrame
	if pf.Raw == "" || (pf.PC == 0 && pf.Function == "" && !pf.HasOffset) {
		return
	}
	handler := false
	for _, f := range th.Frames {
		if pf.PC != 0 && f.PC == pf.PC {
			return
		}
		if pf.PC == 0 && pf.Function != "" && f.Function == pf.Function {
			return
		}
		if isHandlerFrame(f.Function) {
			handler = true
		}
	}
	if pf.Function == "" && !pf.HasOffset {
		return // `PC: @ 0x… (unknown)` adds nothing
	}
	if handler || len(th.Frames) == 0 {
		pf.Index = len(th.Frames)
		th.Frames = append(th.Frames, pf)
		in.note("faulting frame taken from the PC: line (the frame list stops before it)")
		return
	}
	pf.Index = 0
	th.Frames = append([]Frame{pf}, th.Frames...)
	for i := range th.Frames {
		th.Frames[i].Index = i
	}
	in.note("faulting frame taken from the PC: line (abbreviated frame list)")
}

// endsAtRoot reports whether a frame list reaches the bottom of a thread
// (a thread or process entry, or glog's final null frame), so that input
// ending right after it did not cut the stack.
func endsAtRoot(frames []Frame) bool {
	if len(frames) == 0 {
		return false
	}
	last := frames[len(frames)-1]
	if last.PC == 0 && last.Function == "" && !last.HasOffset && strings.HasPrefix(strings.TrimSpace(last.Raw), "@") {
		return true // `@ 0x0 (unknown)` / `@ (nil) (unknown)`
	}
	if threadRoots[last.Function] {
		return true
	}
	// glog prints clone as a bare libc address: `@ 0x7f… (/lib64/libc.so.6+0x…)`.
	return last.Function == "" && (strings.Contains(last.Module, "libc.so") || strings.Contains(last.Module, "libc-"))
}

// unfinished reports whether the crashing stack of a text dump stops before
// its end: neither the dump's end marker nor a thread root frame was seen,
// or its last frame line was cut inside its argument list.
func (in *incident) unfinished(best *stack, frames []Frame) bool {
	switch best.origin {
	case "F1", "F2", "F3":
	default:
		return false
	}
	if len(frames) == 0 || in.ended || in.sec == secDone || in.c.Corrupted {
		return false
	}
	if openParens(frames[len(frames)-1].Raw) > 0 {
		return true
	}
	return !endsAtRoot(frames)
}

// endsAtOutermost reports whether a frame list ends with a frame nothing can
// follow: clone, _start, or glog's final null frame.
func endsAtOutermost(frames []Frame) bool {
	last := frames[len(frames)-1]
	if last.PC == 0 && last.Function == "" && !last.HasOffset && strings.HasPrefix(strings.TrimSpace(last.Raw), "@") {
		return true
	}
	return outermostFrames[last.Function]
}
