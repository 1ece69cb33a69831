package scan

import (
	"encoding/binary"
	"math/bits"
	"regexp"
	"strings"
	"unsafe"
)

// lineKind is what a recognizer found a line to be.
type lineKind uint8

const (
	kOther lineKind = iota
	kBlank
	kStart // process (re)start marker (F0)
	kGlog  // ordinary glog line (I/W/E)
	kFatal // glog F line (F3)
	kCheckHeader
	kQueryID
	kNereids
	kTablet
	kCommit
	kAbortedAt
	kSignal // F1 (with reason) or F2 signal line
	kPC
	kVersion
	kSRQuery
	kTracker
	kAfterDump // je_mallctl, crash_watchdog
	kMinidump
	kTerminate
	kWhat
	kJVMStart
	kJVMOOM
	kHash // any other '#' line of a JVM summary
	kHsErrThread
	kJstackStart
	kJavaThread
	kJavaState
	kAsanStart
	kAsanDeadly
	kTsanStart
	kUbsanStart
	kSanEnd
	kSanAccess
	kGDBCore
	kGDBTerminated
	kGDBCurrent
	kGDBThread
	kGDBCommand
	kJemalloc
	kTcmalloc
	kAssert
	kMemLimit
	kKernelSegv
	kKernelTrap
	kOOMKill
	kShell
	kInstrCheck
	kDorisAPIStart
	kDorisAPIThread
	kBanner // startup version banner in be.INFO
	kDiagGroup
	kDiagFrame
	kDiagEnd
	kCoredumpStart  // systemd-coredump: Process N (comm) of user U dumped core
	kCoredumpThread // systemd-coredump: Stack trace of thread N:
	kCoredumpSignal // coredumpctl info: Signal: 11 (SEGV)
	kSRFile         // StarRocks preamble: the file the thread was reading (format_glog.go F2.pre_file)
	kLifecycleLog   // a glog line printed only while the backend starts or stops (format_lifecycle.go)
	kSanStack       // a sanitizer report's freed-by, allocated-by or thread-creation stack header (format_sanitizer.go)
	kMinidumpReason // minidump_stackwalk: Crash reason:  SIGSEGV /SEGV_MAPERR (format_minidump.go)
	kMinidumpThread // minidump_stackwalk: Thread 65 (crashed)
)

// lineRule is one entry of a format table: a cheap literal test, then an
// optional regular expression whose submatches the assembler reads.
type lineRule struct {
	id       string         // name in the formats spec (§10), e.g. "F1.h_query"
	kind     lineKind       // what the line is
	prefix   string         // the line, leading blanks removed, starts with this
	contains string         // or: the line contains this (used when prefix is empty)
	re       *regexp.Regexp // optional; must match for the rule to apply
	bare     string         // prefix without a leading "*** " (set by newRuleSet)
}

// ruleSet indexes the rules of every format table by the first byte of
// their prefix, so that a line is compared with a handful of rules at most.
type ruleSet struct {
	byFirst  [256][]*lineRule
	contains []*lineRule
}

func newRuleSet(tables ...[]lineRule) *ruleSet {
	rs := &ruleSet{}
	for _, t := range tables {
		for i := range t {
			r := &t[i]
			if r.prefix != "" {
				rs.byFirst[r.prefix[0]] = append(rs.byFirst[r.prefix[0]], r)
				// Markdown eats the `***` of dump headers (it reads them as
				// emphasis): index those rules under their bare text too.
				if bare, ok := strings.CutPrefix(r.prefix, "*** "); ok && bare != "" {
					r.bare = bare
					rs.byFirst[bare[0]] = append(rs.byFirst[bare[0]], r)
				}
			} else {
				rs.contains = append(rs.contains, r)
			}
		}
	}
	return rs
}

// match returns the first rule that matches the line (leading blanks
// removed in trimmed) and its submatches.
func (rs *ruleSet) match(text, trimmed string, tryContains bool) (*lineRule, []string) {
	if trimmed == "" {
		return nil, nil
	}
	for _, r := range rs.byFirst[trimmed[0]] {
		if !strings.HasPrefix(trimmed, r.prefix) && !(r.bare != "" && strings.HasPrefix(trimmed, r.bare)) {
			continue
		}
		if r.re == nil {
			return r, nil
		}
		if m := r.re.FindStringSubmatch(trimmed); m != nil {
			return r, m
		}
	}
	if !tryContains {
		return nil, nil
	}
	for _, r := range rs.contains {
		if !strings.Contains(text, r.contains) {
			continue
		}
		if r.re == nil {
			return r, nil
		}
		if m := r.re.FindStringSubmatch(trimmed); m != nil {
			return r, m
		}
	}
	return nil, nil
}

// allRules is the union of the per-family tables (format_*.go).
var allRules = newRuleSet(boostRules, glogRules, terminateRules, jvmRules, sanitizerRules, gdbRules, coredumpRules, minidumpRules, miscRules, lifecycleRules)

// word8 is the first eight bytes of s (len(s) >= 8) as a little-endian
// word, loaded without a bounds check.
func word8(s string) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s), 8))
}

// digitRunEnd returns the index of the first byte at or after i in s that
// is no ASCII digit (len(s) when none), eight bytes at a time: glogLine
// walks three digit runs of every glog line (date, microseconds, thread
// id), a tenth of a be.INFO's scan byte by byte (issue 11).
func digitRunEnd(s string, i int) int {
	for i+8 <= len(s) {
		m := digitBytes(word8(s[i:]))
		if m != swarHigh {
			return i + bits.TrailingZeros64(^m&swarHigh)>>3
		}
		i += 8
	}
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// glogLine recognizes the glog prefix of §1.3 without a regular expression:
// severity, MMDD or YYYYMMDD, time, optional zone, thread id, file:line].
// It returns the severity and the message.
func glogLine(s string) (sev byte, tid string, msg string, ok bool) {
	if len(s) < 24 {
		return 0, "", "", false
	}
	switch s[0] {
	case 'I', 'W', 'E', 'F':
	default:
		return 0, "", "", false
	}
	i := digitRunEnd(s, 1)
	if n := i - 1; (n != 4 && n != 8) || i+16 > len(s) || s[i] != ' ' {
		return 0, "", "", false
	}
	t := s[i+1:]
	if len(t) < 15 || t[2] != ':' || t[5] != ':' || t[8] != '.' {
		return 0, "", "", false
	}
	j := digitRunEnd(t, 9)
	t = t[j:]
	if len(t) > 6 && t[0] == ' ' && (t[1] == '+' || t[1] == '-') && isDigit(t[2]) {
		t = t[6:]
	}
	t = strings.TrimLeft(t, " ")
	k := digitRunEnd(t, 0)
	if k == 0 || k >= len(t) || t[k] != ' ' {
		return 0, "", "", false
	}
	tid = t[:k]
	t = t[k+1:]
	end := strings.IndexByte(t, ']')
	if end < 0 || strings.IndexByte(t[:end], ':') < 0 {
		return 0, "", "", false
	}
	msg = t[end+1:]
	if len(msg) > 0 && msg[0] == ' ' {
		msg = msg[1:]
	}
	return s[0], tid, msg, true
}
