package scan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The prefix learner's walks go over equal bytes eight at a time
// (plainRun in learnPrefixCmp, the digit-free words in matchPrefix). The
// references below are the byte-at-a-time walks they replace; the test and
// the fuzz target check that both give the same answer.

// learnPrefixByteWalk is learnPrefixCmp's walk one byte at a time (the
// code before plainRun), after its first two tests.
func learnPrefixByteWalk(a, b []byte) int {
	var ends [8]int
	n, last := 0, 0
	i, j, digits := 0, 0, 0
	ts, nonBlank := true, false
	for i < len(a) && j < len(b) && j < maxPrefixBytes {
		ca, cb := a[i], b[j]
		if ca != cb || isDigit(cb) {
			if !isDigit(ca) || !isDigit(cb) {
				break
			}
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
				digits++
			}
			nonBlank = true
			continue
		}
		e := 0
		switch cb {
		case ':', '|', ']', '>':
			if j+1 < len(b) && b[j+1] == ' ' && i+1 < len(a) && a[i+1] == ' ' && (nonBlank || j == 0 && cb != '>') {
				e = j + 2
			}
		case '\t':
			if nonBlank {
				e = j + 1
			}
		case ' ':
			if ts && digits >= 4 {
				e = j + 1
			}
		}
		if e > 0 {
			if n < len(ends) {
				ends[n] = e
				n++
			}
			last = e
		}
		if !timestampChar[cb] {
			ts = false
		}
		if cb != ' ' && cb != '\t' {
			nonBlank = true
		}
		i++
		j++
	}
	if last == 0 || i == len(a) && j == len(b) {
		return 0
	}
	for _, e := range ends[:n] {
		if contentStarts(b[e:]) {
			return e
		}
	}
	return last
}

// learnPrefixRef is learnPrefix with the byte-at-a-time walk.
func learnPrefixRef(a, b []byte) int {
	if len(b) <= maxPrefixBytes && equalModDigits(a, b) {
		return 0
	}
	if e := pastePrefix(a, b); e > 0 {
		return e
	}
	return learnPrefixByteWalk(a, b)
}

// matchPrefixRef is matchPrefix one byte at a time.
func matchPrefixRef(t []byte, shape string) int {
	i, j := 0, 0
	for i < len(shape) {
		if j >= len(t) {
			if strings.TrimRight(shape[i:], " \t") == "" {
				return j
			}
			return 0
		}
		c := shape[i]
		if isDigit(c) {
			if !isDigit(t[j]) {
				return 0
			}
			for i < len(shape) && isDigit(shape[i]) {
				i++
			}
			for j < len(t) && isDigit(t[j]) {
				j++
			}
			continue
		}
		if t[j] != c {
			return 0
		}
		i++
		j++
	}
	return j
}

var prefixWordPairs = [][2]string{
	{"org.apache.hadoop.security.Groups: Creating new Groups object", "org.apache.hadoop.security.Groups: scanner opened, batch size 4064"},
	{"org.apache.hadoop.hdfs.DFSClient: x", "org.apache.doris.common.jni.JniScanner: y"},
	{"kube.var.log.containers.be-0_starrocks_be-abcdef.log: I0303 10:15:01.000001 1 a.cpp:1] x", "kube.var.log.containers.be-0_starrocks_be-abcdef.log: I0303 10:15:02.000001 1 a.cpp:1] y"},
	{"2025-03-03 10:15:01,262 INFO  [main] org.apache.X - a", "2025-03-03 10:15:22,098 INFO  [main] org.apache.Y - b"},
	{"SLF4J: Class path contains multiple SLF4J bindings", "SLF4J: Found binding in [jar:file:/opt/x.jar!/org/slf4j/impl/StaticLoggerBinder.class]"},
	{"averyveryverylongprefixwithoutseparators|x", "averyveryverylongprefixwithoutseparators|y"},
	{"abcdefgh\tijklmnop\tq", "abcdefgh\tijklmnop\tr"},
	{"host-node-0001.example.com | text", "host-node-0001.example.com | other text"},
	{"[pod/be-0/be] F0303 a", "[pod/be-0/be] I0303 b"},
	{"abcdefghabcdefgh", "abcdefghabcdefgh"},
	{"abcdefghabcdefgh12>", "abcdefghabcdefgh34> "},
	{"\x01\x02\x03\x04\x05\x06\x07\x08\x09: a", "\x01\x02\x03\x04\x05\x06\x07\x08\x09: b"},
	{"ü¥€ßüß€¥ü: a", "ü¥€ßüß€¥ü: b"},
	// digit runs inside the words past a timestamp (plainRun steps over
	// equal ones, and backs off to the start of one that differs)
	{"x IPC Server handler 7 on 8020 class: a", "x IPC Server handler 7 on 8020 class: b"},
	{"x [pool-3-thread-12345678] Logger: a", "x [pool-3-thread-123456789] Logger: b"},
	{"x [pool-3-thread-12345678] Logger: a", "x [pool-3-thread-12345679] Logger: b"},
}

func TestPrefixWordWalks(t *testing.T) {
	for _, p := range prefixWordPairs {
		a, b := []byte(p[0]), []byte(p[1])
		want := learnPrefixRef(a, b)
		require.Equal(t, want, learnPrefix(a, b), "learnPrefix(%q, %q)", p[0], p[1])
		for _, sh := range []string{p[0], p[1], p[0][:len(p[0])/2], p[0][:min(len(p[0]), 17)]} {
			assert.Equal(t, matchPrefixRef(b, sh), matchPrefix(b, sh), "matchPrefix(%q, %q)", p[1], sh)
		}
	}
	// A case the word walk must get right: a learned prefix of two words.
	assert.Equal(t, len("org.apache.hadoop.security.Groups: "), learnPrefix([]byte(prefixWordPairs[0][0]), []byte(prefixWordPairs[0][1])))
	assert.Equal(t, len("org.apache.hadoop.security.Groups: "), matchPrefix([]byte(prefixWordPairs[0][1]), "org.apache.hadoop.security.Groups: "))
	// walkStopBytes marks exactly the bytes the walk stops or decides at:
	// separators, bytes below low (a blank only before nonBlank), never a
	// digit (plainRun steps over equal digit runs).
	for _, c := range []byte(":|]> \t\x00\x1f;=") {
		for k := range 8 {
			w := []byte("abcdefgh")
			w[k] = c
			want := uint64(0x80) << (8 * k)
			if c == ' ' {
				assert.Zero(t, walkStopBytes(leUint64(w), 0x20), "%q past a non-blank byte", w)
			} else {
				assert.Equal(t, want, walkStopBytes(leUint64(w), 0x20), "%q", w)
			}
			assert.Equal(t, want, walkStopBytes(leUint64(w), 0x21), "%q", w)
		}
	}
	assert.Zero(t, walkStopBytes(leUint64([]byte("a.b-c/Z[")), 0x21))
	assert.Zero(t, walkStopBytes(leUint64([]byte("01234567")), 0x21))
}

func leUint64(b []byte) uint64 {
	var x uint64
	for i := 7; i >= 0; i-- {
		x = x<<8 | uint64(b[i])
	}
	return x
}

// FuzzPrefixWordWalks checks the word-at-a-time walks of the prefix
// learner against the byte-at-a-time ones.
func FuzzPrefixWordWalks(f *testing.F) {
	for _, p := range prefixWordPairs {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 4*maxPrefixBytes || len(b) > 4*maxPrefixBytes {
			return
		}
		require.Equal(t, learnPrefixRef([]byte(a), []byte(b)), learnPrefix([]byte(a), []byte(b)), "learnPrefix(%q, %q)", a, b)
		if !mayShare([]byte(a), []byte(b)) {
			// learnCmp's first test: no prefix to learn.
			require.Zero(t, learnPrefixRef([]byte(a), []byte(b)), "mayShare(%q, %q)", a, b)
		}
		require.Equal(t, matchPrefixRef([]byte(b), a), matchPrefix([]byte(b), a), "matchPrefix(%q, %q)", b, a)
		// b behind a's first half: a long shared start.
		c := a[:len(a)/2] + b
		require.Equal(t, learnPrefixRef([]byte(a), []byte(c)), learnPrefix([]byte(a), []byte(c)), "learnPrefix(%q, %q)", a, c)
		require.Equal(t, matchPrefixRef([]byte(c), a), matchPrefix([]byte(c), a), "matchPrefix(%q, %q)", c, a)
		if n := len(a) / 2; n > 0 {
			require.Equal(t, matchPrefixRef([]byte(b), a[:n]), matchPrefix([]byte(b), a[:n]), "matchPrefix(%q, %q)", b, a[:n])
		}
	})
}
