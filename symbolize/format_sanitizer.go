package symbolize

import "strings"

// Sanitizer reports (F6): ASAN, LSAN, MSAN, UBSAN, TSAN; formats spec §4 F6.
// Frames (`    #0 0x… in f file:line:col`) are parsed by parseSanitizerFrame.
var sanitizerRules = []lineRule{
	{id: "F6.asan_start", kind: kAsanStart, prefix: "==",
		re: mustCompile(`^==(\d+)==ERROR: (AddressSanitizer|LeakSanitizer|MemorySanitizer|ThreadSanitizer): (.*)$`)},
	{id: "F6.asan_end", kind: kSanEnd, prefix: "==",
		re: mustCompile(`^==\d+==ABORTING`)},
	{id: "F6.tsan_delim", kind: kSanEnd, prefix: "==================",
		re: mustCompile(`^=+$`)},
	{id: "F6.deadly", kind: kAsanDeadly, prefix: "AddressSanitizer:DEADLYSIGNAL"},
	{id: "F6.tsan_start", kind: kTsanStart, prefix: "WARNING: ThreadSanitizer: ",
		re: mustCompile(`^WARNING: ThreadSanitizer: (.+?)(?: \(pid=(\d+)\))?$`)},
	{id: "F6.summary", kind: kSanEnd, prefix: "SUMMARY: ",
		re: mustCompile(`^SUMMARY: (?:AddressSanitizer|LeakSanitizer|ThreadSanitizer|UndefinedBehaviorSanitizer|MemorySanitizer): (.*)$`)},
	{id: "F6.access", kind: kSanAccess, prefix: "",
		contains: " of size ",
		re:       mustCompile(`^(READ|WRITE|Read|Write|Previous read|Previous write|Atomic read|Atomic write) of size (\d+) at (0x[0-9a-f]+) (?:thread (T\d+)(?: \((.*)\))?|by (?:thread (T\d+)|main thread))`)},
	{id: "F6.ubsan_start", kind: kUbsanStart, contains: ": runtime error: ",
		re: mustCompile(`^(\S+?):(\d+):(\d+): runtime error: (.*)$`)},
}

// Lines that introduce the further stacks of a sanitizer report (ASAN
// `freed by thread T455 (…) here:`, `previously allocated by …`, `Thread
// T456 (…) created by T0 here:`, LSAN `Direct leak of … allocated from:`,
// TSAN `Previous read … by thread T3:`, `Location is heap block …`,
// `Mutex M77 … created at:`). Each must end with a colon.
var (
	sanitizerStackContains = []string{" here:", "allocated from:", " by thread ", " by main thread"}
	sanitizerStackPrefixes = []string{"Location is", "Thread T", "Mutex "}
)

func isSanitizerStackHeader(t string) bool {
	if !strings.HasSuffix(t, ":") {
		return false
	}
	for _, c := range sanitizerStackContains {
		if strings.Contains(t, c) {
			return true
		}
	}
	for _, p := range sanitizerStackPrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}
