package scan

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Where a sanitizer report ends (format_sanitizer.go sanInterleaved):
// at the first log line after it, with its own sections kept together
// and a few log lines of other threads tolerated inside it.

// glogChatter is n be.out glog lines of other threads (the benchmark's
// shapes, pipeline/parallel_bench_test.go writeBeOut).
func glogChatter(n int) string {
	var b strings.Builder
	for i := range n {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "I0303 10:15:%02d.%06d 140073341400640 fragment_mgr.cpp:702] Register query/load memory tracker, query/load id: 9c40d77b5a2c474a-8663123a9dc9d2ea limit: 2.00 GB\n", i%60, i)
		case 1:
			fmt.Fprintf(&b, "W20250303 10:15:%02d.%06d 12345 tablet_manager.cpp:1021] start to do tablet meta checkpoint, tablet_id=1234567\n", i%60, i)
		default:
			fmt.Fprintf(&b, "2025-03-03 10:15:%02d,%03d INFO [pool-3-thread-1] org.apache.hadoop.hdfs.DFSClient: block pool refreshed %d\n", i%60, i%1000, i)
		}
	}
	return b.String()
}

func lineCount(s string) int { return strings.Count(s, "\n") }

// Two ASAN reports cut before their ABORTING line (the corpus texts are
// such: doris/154 stops inside its access stack, starrocks/098 too), each
// followed by chatter: each report ends at the first log line after it,
// and the chatter between them belongs to neither.
func TestSanitizerReportEndsAtLogLine(t *testing.T) {
	a := cutLines(t, corpusMow, 2, 12)   // ERROR line, access line, two ==PID== warnings, frames #0-#6
	b := cutLines(t, corpusSRExec, 1, 6) // =====, ERROR, access line, frames #0-#2
	for _, chatter := range []string{glogChatter(1), glogChatter(5), glogChatter(200)} {
		text := a + chatter + b + chatter
		cs := parseText(t, text)
		require.Len(t, cs, 2, "chatter of %d lines", lineCount(chatter))
		assert.Equal(t, 1, cs[0].StartLine)
		assert.Equal(t, lineCount(a), cs[0].EndLine, "the first report ends before the first log line")
		assert.Equal(t, lineCount(a+chatter)+2, cs[1].StartLine, "at the ERROR line: the `=====` before it is not the first report's end")
		assert.Equal(t, lineCount(a+chatter+b), cs[1].EndLine, "the second report ends before the first log line")
		for _, c := range cs {
			assert.Equal(t, KindSanitizer, c.Kind)
			assert.Equal(t, "heap-use-after-free", cs[1].SanitizerBug)
			for _, n := range c.Notes {
				assert.NotContains(t, n, "interleaved", "nothing was interleaved")
			}
		}
		assert.Equal(t, "stack-buffer-overflow", cs[0].SanitizerBug)
		assert.Len(t, cs[0].CrashingThread().Frames, 7)
		assert.Len(t, cs[1].CrashingThread().Frames, 3)
	}
	// A startup banner, a lifecycle step or a memory-limit line ends the
	// report at once: it is context for what follows.
	for _, l := range []string{
		"I1112 14:20:06.000001 12345 daemon.cpp:100] version doris-2.1.6-rc04(AVX2) RELEASE (build git://x@4f5a6b7)\n",
		"W0303 10:15:02.118230 1 mem_info.cpp:1] Memory of process exceed limit. QUERY Used: 60 GB, Limit: 58 GB\n",
	} {
		cs := parseText(t, a+l+glogChatter(2)+b)
		require.Len(t, cs, 2, l)
		assert.Equal(t, lineCount(a), cs[0].EndLine, l)
	}
}

// ASAN's sections after the access stack, with log lines of other
// threads between them (the report is written line by line while the
// other threads run): up to maxSanInterleave foreign lines in a row are
// held back and, when the report goes on after them, it is one report
// with all its stacks, and a note names the interleaved lines. One more
// foreign line ends the report before the first of them, and what
// follows is a report fragment of its own.
func TestSanitizerReportInterleavedLogLines(t *testing.T) {
	head := cutLines(t, formatsASAN, 1, 7)  // =====, ERROR, access line, frames #0-#2, blank
	rest := cutLines(t, formatsASAN, 8, 26) // description, freed by, allocated by, created by, SUMMARY, shadow bytes, legend, ABORTING
	dump := cutLines(t, formatsASAN, 27, 36)
	for n := 1; n <= maxSanInterleave; n++ {
		log := glogChatter(n)
		for _, text := range []string{head + log + rest + dump, head + rest[:strings.Index(rest, "previously")] + log + rest[strings.Index(rest, "previously"):] + dump} {
			cs := parseText(t, text)
			require.Len(t, cs, 1, "%d log lines inside the report", n)
			c := cs[0]
			assert.Equal(t, KindSanitizer, c.Kind)
			assert.Equal(t, "SIGABRT", c.Signal, "the abort dump after ABORTING joins the report")
			assert.Equal(t, lineCount(text), c.EndLine)
			assert.False(t, c.Corrupted, c.CorruptedReason)
			states := []string{}
			for _, th := range c.Threads {
				states = append(states, th.State)
			}
			assert.Contains(t, states, "freed by thread T455 (FragmentMgrThre) here")
			assert.Contains(t, states, "previously allocated by thread T455 (FragmentMgrThre) here")
			assert.Contains(t, states, "Thread T456 (FragmentMgrThre) created by T0 here")
			assert.Contains(t, strings.Join(c.Notes, "\n"), fmt.Sprintf("%d line(s) of other output from line ", n))
		}
	}
	// Log lines after ABORTING, before the abort dump, are interleaved too.
	cs := parseText(t, head+rest+glogChatter(2)+dump)
	require.Len(t, cs, 1)
	assert.Equal(t, "SIGABRT", cs[0].Signal)

	// maxSanInterleave+1 foreign lines: the report ended before them.
	log := glogChatter(maxSanInterleave + 1)
	cs = parseText(t, head+log+rest)
	require.Len(t, cs, 2)
	assert.Equal(t, lineCount(head)-1, cs[0].EndLine, "the blank line after the access stack is not the report's end")
	assert.Equal(t, lineCount(head+log)+2, cs[1].StartLine, "the rest starts at its `freed by thread` header")
	assert.True(t, cs[1].Corrupted, "the rest is a fragment without its ERROR line")
	// After a log line, an unrecognized line is not the report's.
	cs = parseText(t, head+glogChatter(1)+"some prose of the ticket\nmore prose\nand more\n"+rest)
	require.Len(t, cs, 2)
	assert.Equal(t, lineCount(head)-1, cs[0].EndLine)
}

// A be.out with sanitizer reports cut before ABORTING among long chatter
// (the shape that kept one incident open up to the next crash text,
// across ScanParallel's chunk borders): the parallel scan yields the
// single pass's incidents, and it takes them from the workers.
func TestSanitizerReportsParallel(t *testing.T) {
	reports := []string{
		cutLines(t, corpusMow, 2, 12),
		cutLines(t, corpusSRExec, 1, 6),
		cutLines(t, formatsASAN, 1, 7) + glogChatter(2) + cutLines(t, formatsASAN, 8, 36),
	}
	var b bytes.Buffer
	for i := range 30 {
		b.WriteString(glogChatter(400))
		b.WriteString(reports[i%len(reports)])
	}
	data := b.Bytes()
	want := sequentialJSON(t, data, ScanOptions{})
	require.Len(t, want, 30)
	for _, w := range []int{1, 2} {
		var st ParallelStats
		got := parallelJSON(t, data, ScanOptions{}, ParallelOptions{Workers: w, ChunkBytes: 32 << 10, Stats: &st})
		require.Equal(t, want, got, "workers %d", w)
		assert.Greater(t, st.Reused, 20, "workers %d: incidents taken from the workers", w)
		assert.Less(t, st.ContinuedLines, int64(lineCount(string(data))/4), "workers %d: lines the in-order scan read itself", w)
	}
}
