package catalog

import (
	"fmt"
	"strings"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// threadGroups groups the threads of a thread-dump incident with
// signature.Aggregate. Only THREADS incidents are grouped: for a crash the
// other threads are bystanders.
func threadGroups(crash *symbolize.Crash, sig signature.Signature) []signature.Group {
	if crash.Kind != symbolize.KindThreadDump && sig.Kind != "THREADS" {
		return nil
	}
	return signature.Aggregate(crash.Threads)
}

// threadsHold reports whether one group satisfies t, and says which.
func (c *Catalog) threadsHold(t *compiledThreads, groups []signature.Group) (string, bool) {
	for gi := range groups {
		g := &groups[gi]
		if g.Count < t.minCount {
			continue
		}
		all := true
		for _, id := range t.frames {
			found := false
			for _, name := range g.Frames {
				if c.ix.globs[id].match(name) {
					found = true
					break
				}
			}
			if !found {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		if t.name != nil {
			named := false
			for _, n := range append(append([]string(nil), g.NameSamples...), g.NamePatterns...) {
				if t.name.match(n) {
					named = true
					break
				}
			}
			if !named {
				continue
			}
		}
		top := ""
		if len(g.Frames) > 0 {
			top = g.Frames[0]
		}
		return fmt.Sprintf("thread group of %d threads (top frame %s) has every thread frame glob (min_count %d)", g.Count, top, t.minCount), true
	}
	return "", false
}

// idleTable is the compiled idle knowledge of a catalog's `stack:`
// sections (idle_waits, idle_frames).
type idleTable struct {
	waits, loops []glob
}

// compileIdle compiles the idle globs; the decoder has refused bad ones,
// so one that does not compile (a hand-built StackKnowledge) is skipped.
func compileIdle(k StackKnowledge) idleTable {
	var t idleTable
	for _, s := range k.IdleWaits {
		if g, err := compileGlob(s); err == nil {
			t.waits = append(t.waits, g)
		}
	}
	for _, s := range k.IdleFrames {
		if g, err := compileGlob(s); err == nil {
			t.loops = append(t.loops, g)
		}
	}
	return t
}

// idleOf reads a thread's normalized frames (innermost first): the first
// named frame that is not a blocking primitive or a work-queue take
// (idle_waits) decides. The thread is idle when that frame is a pool or
// daemon loop waiting for work (idle_frames); at is its index, or -1 when
// every named frame is a wait (or there is none).
func (t *idleTable) idleOf(frames []string) (idle bool, at int) {
	for i, f := range frames {
		if f == "" || f == "?" || anyGlob(t.waits, f) {
			continue
		}
		return anyGlob(t.loops, f), i
	}
	return false, -1
}

// creationFrames are the frames of the code that starts a thread in both
// backends (be/src/util/thread.cpp Thread::create/start_thread,
// be/src/util/threadpool.cpp ThreadPool::init/create_thread and
// ThreadPoolBuilder::build, std::thread, and the sanitizers' pthread_create
// interceptor at the top of a `Thread T5 created by T0 here:` block).
var creationFrames = compileGlobs([]string{
	"pthread_create", "__interceptor_pthread_create", "___interceptor_pthread_create", "__pthread_create_*",
	"*::Thread::start_thread", "*::Thread::create", "*::ThreadPool::create_thread", "*::ThreadPool::init",
	"*::ThreadPoolBuilder::build", "std::thread::_M_start_thread", "std::thread::thread",
})

// creationChain returns the number of frames of a thread-creation chain at
// the top of the crashing stack when the stack is a creation stack rather
// than the crash: the incident has no signal, sanitizer bug type, message or
// exception (a sanitizer report cut before its error line and crashing
// stack, starting inside the `created by` block whose header was cut too),
// and its first named frame starts a thread. It returns 0 otherwise. Such a
// stack says who created the thread (a pool of FragmentMgr, of the pipeline
// task scheduler), never what crashed on it: every pool thread is created
// under main or ExecEnv::init. With a nil crash only the frames are read
// (the length of the chain at the top of a known creation stack).
func creationChain(crash *symbolize.Crash, frames []string) int {
	if crash != nil && (crash.Signal != "" || crash.SanitizerBug != "" || crash.Message != "" || crash.ExceptionType != "" ||
		crash.Kind != symbolize.KindUnknown && crash.Kind != symbolize.KindSanitizer) {
		return 0
	}
	n := 0
	for i, f := range frames {
		if f == "" {
			continue
		}
		// every creation frame names a thread ("pthread_create", "Thread::",
		// "ThreadPool", "std::thread"): a cheap test before the globs
		if !strings.Contains(f, "hread") || !anyGlob(creationFrames, f) {
			break
		}
		n = i + 1
	}
	return n
}

// creationStatePrefix starts the State the scanner gives a sanitizer's
// thread-creation stack whose header was cut; a whole one keeps its header
// (`Thread T12 (…) created by T0 here`).
const creationStatePrefix = "thread-creation stack"

// cutSanitizerStack returns the first auxiliary stack of a sanitizer
// report whose header was cut (no State: neither `freed by`, `previously
// allocated by` nor a thread-creation block) and that has frames, or nil.
// Only a sanitizer report has such stacks: the scanner keeps them beside an
// empty crashing thread when the paste starts inside the report.
func cutSanitizerStack(crash *symbolize.Crash) *symbolize.Thread {
	if crash.Kind != symbolize.KindSanitizer {
		return nil
	}
	for i := range crash.Threads {
		t := &crash.Threads[i]
		if !t.Crashed && len(t.Frames) > 0 && t.State == "" {
			return t
		}
	}
	return nil
}

// creationThread returns the incident's thread-creation stack (an
// auxiliary thread of a sanitizer report), or nil.
func creationThread(crash *symbolize.Crash) *symbolize.Thread {
	for i := range crash.Threads {
		t := &crash.Threads[i]
		if !t.Crashed && len(t.Frames) > 0 && (strings.HasPrefix(t.State, creationStatePrefix) || strings.Contains(t.State, " created by ")) {
			return t
		}
	}
	return nil
}
