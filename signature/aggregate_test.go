package signature

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/crashsig/crashsig/symbolize"
)

var parkedStack = []string{
	"jdk.internal.misc.Unsafe.park",
	"java.util.concurrent.locks.LockSupport.parkNanos",
	"java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.awaitNanos",
	"java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take",
	"java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take",
	"java.util.concurrent.ThreadPoolExecutor.getTask",
	"java.util.concurrent.ThreadPoolExecutor.runWorker",
	"java.util.concurrent.ThreadPoolExecutor$Worker.run",
	"java.lang.Thread.run",
}

var parkedFiles = []string{"java.base@17.0.9/Native Method", "java.base@17.0.9/LockSupport.java:252",
	"java.base@17.0.9/AbstractQueuedSynchronizer.java:1672", "java.base@17.0.9/ScheduledThreadPoolExecutor.java:1182",
	"java.base@17.0.9/ScheduledThreadPoolExecutor.java:899", "java.base@17.0.9/ThreadPoolExecutor.java:1062",
	"java.base@17.0.9/ThreadPoolExecutor.java:1122", "java.base@17.0.9/ThreadPoolExecutor.java:635", "java.base@17.0.9/Thread.java:840"}

var otherStacks = [][]string{
	{"java.lang.Object.wait", "java.lang.ref.ReferenceQueue.remove", "java.lang.ref.ReferenceQueue.remove", "java.lang.ref.Finalizer$FinalizerThread.run"},
	{"java.lang.ref.Reference.waitForReferencePendingList", "java.lang.ref.Reference.processPendingReferences", "java.lang.ref.Reference$ReferenceHandler.run"},
	{"sun.nio.ch.EPoll.wait", "sun.nio.ch.EPollSelectorImpl.doSelect", "sun.nio.ch.SelectorImpl.lockAndDoSelect", "sun.nio.ch.SelectorImpl.select", "org.apache.hadoop.net.SocketIOWithTimeout$SelectorPool.select"},
}

// jstackThread is one generated thread: its Java name and stack.
type jstackThread struct {
	name  string
	stack []string
}

// genThreads makes parked sdk-ScheduledExecutor threads interleaved with
// ordinary ones, deterministically.
func genThreads(parked int) []jstackThread {
	r := rand.New(rand.NewPCG(1, 2))
	var out []jstackThread
	for i := 0; i < parked; i++ {
		out = append(out, jstackThread{name: fmt.Sprintf("sdk-ScheduledExecutor-%d-%d", i/7+1, i%7+1), stack: parkedStack})
		if i%50 == 0 {
			k := r.IntN(len(otherStacks))
			out = append(out, jstackThread{name: fmt.Sprintf("worker-%d", i), stack: otherStacks[k]})
		}
	}
	return out
}

// jstackText renders threads as a `Full thread dump`.
func jstackText(ts []jstackThread) string {
	var b strings.Builder
	b.WriteString("2026-11-29 21:00:00\nFull thread dump OpenJDK 64-Bit Server VM (17.0.9+9 mixed mode, sharing):\n\n")
	for i, t := range ts {
		fmt.Fprintf(&b, "\"%s\" #%d daemon prio=5 os_prio=0 cpu=0.10ms elapsed=10.00s tid=0x00007f3a%08x nid=0x%x waiting on condition  [0x00007f39%08x]\n", t.name, i+20, i, 1000+i, i)
		b.WriteString("   java.lang.Thread.State: TIMED_WAITING (parking)\n")
		for j, f := range t.stack {
			file := "Unknown Source"
			if len(t.stack) == len(parkedStack) && j < len(parkedFiles) {
				file = parkedFiles[j]
			}
			fmt.Fprintf(&b, "\tat %s(%s)\n", f, file)
			if j == 0 {
				b.WriteString("\t- parking to wait for  <0x000000070a1b2c3d> (a java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject)\n")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("JNI global refs: 25, weak refs: 0\n\n")
	return b.String()
}

func checkParkedGroup(t *testing.T, groups []Group, parked int) {
	t.Helper()
	if len(groups) == 0 {
		t.Fatal("no groups")
	}
	top := groups[0]
	if top.Count != parked {
		t.Fatalf("top group has %d threads, want %d (groups: %v)", top.Count, parked, groups)
	}
	if top.Frames[0] != "jdk.internal.misc.Unsafe.park" || top.Frames[3] != "java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take" {
		t.Errorf("frames %q", top.Frames)
	}
	total := 0
	for i, g := range groups {
		total += g.Count
		if i > 0 && g.Count > groups[i-1].Count {
			t.Errorf("groups not by count: %v", groups)
		}
	}
	if len(groups) != 1+len(otherStacks) {
		t.Errorf("%d groups, want %d", len(groups), 1+len(otherStacks))
	}
	if len(top.NameSamples) != maxNameSamples {
		t.Errorf("name samples %q", top.NameSamples)
	}
}

// 35,000 parked threads become one group; names never split it.
func TestAggregateGeneratedThreads(t *testing.T) {
	const parked = 35000
	ts := genThreads(parked)
	threads := make([]symbolize.Thread, len(ts))
	for i, x := range ts {
		// The OS thread name of a JVM thread is inherited from the native
		// thread that created it: half of the parked threads carry the
		// BE worker's name. It must not split the group.
		name := x.name
		if i%2 == 1 && strings.HasPrefix(name, "sdk-") {
			name = "rs_normal [worker]"
		}
		th := symbolize.Thread{ID: int64(i + 1), Name: name, State: "TIMED_WAITING (parking)"}
		for j, f := range x.stack {
			th.Frames = append(th.Frames, symbolize.Frame{Index: j, Function: f + "(Native Method)", Java: true})
		}
		threads[i] = th
	}
	groups := Aggregate(threads)
	checkParkedGroup(t, groups, parked)
	pats := strings.Join(groups[0].NamePatterns, ",")
	if pats != "rs_normal [worker],sdk-ScheduledExecutor-<n>-<n>" {
		t.Errorf("name patterns %q", pats)
	}
	// The crashing thread's group comes first even when small.
	threads[len(threads)-1].Crashed = true
	threads[len(threads)-1].Frames = []symbolize.Frame{{Function: "doris::Foo::bar()"}}
	groups = Aggregate(threads)
	if !groups[0].Crashed || groups[0].Count != 1 || groups[1].Count != parked-1 {
		t.Errorf("crashed group not first: %v / %v", groups[0], groups[1])
	}
}

// The same dump as text, through the lead's parser.
func TestAggregateGeneratedJstackParsed(t *testing.T) {
	const parked = 3000
	text := jstackText(genThreads(parked))
	cs, err := symbolize.ParseAll(context.Background(), strings.NewReader(text), symbolize.ScanOptions{Source: "gen-jstack"})
	if err != nil {
		t.Fatal(err)
	}
	var dump *symbolize.Crash
	for _, c := range cs {
		if c.Kind == symbolize.KindThreadDump {
			dump = c
		}
	}
	if dump == nil {
		t.Fatalf("no thread dump among %d incidents", len(cs))
	}
	groups := Aggregate(dump.Threads)
	checkParkedGroup(t, groups, parked)
	if got := strings.Join(groups[0].NamePatterns, ","); got != "sdk-ScheduledExecutor-<n>-<n>" {
		t.Errorf("patterns %q", got)
	}
	s := Generate(dump)
	if s.Kind != "THREADS" || len(s.Frames) == 0 || s.Frames[0] != "java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take" {
		t.Errorf("thread dump signature %s", s.Key)
	}
}

func TestNamePattern(t *testing.T) {
	for in, want := range map[string]string{
		"sdk-ScheduledExecutor-12-3": "sdk-ScheduledExecutor-<n>-<n>",
		"rs_normal [worker]":         "rs_normal [worker]",
		"GC Thread#0":                "GC Thread#<n>",
		"":                           "",
	} {
		if got := NamePattern(in); got != want {
			t.Errorf("NamePattern(%q) = %q, want %q", in, got, want)
		}
	}
}
