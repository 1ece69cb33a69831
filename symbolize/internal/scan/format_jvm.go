package scan

import "strings"

// The embedded JVM: fatal-error summaries and hs_err files (F5), and Java
// thread dumps (F7.1, `kill -3` / jstack); formats spec §4 F5, F7.1.
var jvmRules = []lineRule{
	{id: "F5.start", kind: kJVMStart, prefix: "#", contains: "",
		re: mustCompile(`^#\s+A fatal error has been detected by the Java Runtime Environment`)},
	{id: "F5.oom", kind: kJVMOOM, prefix: "# There is insufficient memory for the Java Runtime Environment"},
	{id: "F5.hash", kind: kHash, prefix: "#",
		re: mustCompile(`^#(?:$|[^0-9])`)},
	{id: "F5.thread_banner", kind: kHsErrThread, prefix: "---------------  T H R E A D"},
	{id: "F7.java_start", kind: kJstackStart, prefix: "Full thread dump "},
	// `"main" #1 prio=5 os_prio=0 cpu=… elapsed=… tid=0x… nid=0x1f2e waiting on condition  [0x…]`
	{id: "F7.java_thread", kind: kJavaThread, prefix: `"`,
		re: mustCompile(`^"(.*)" (?:#(\d+) )?(?:\[\d+\] )?(?:daemon )?(?:prio=\d+ )?os_prio=-?\d+ (?:cpu=\S+ )?(?:elapsed=\S+ )?(?:allocated=\S+ )?(?:defined_classes=\d+ )?tid=(0x[0-9a-f]+) nid=(0x[0-9a-f]+|\d+) ?(.*)$`)},
	{id: "F7.java_state", kind: kJavaState, prefix: "java.lang.Thread.State: ",
		re: mustCompile(`^java\.lang\.Thread\.State: (.*)$`)},
}

// jstackContext are the lines of a Java thread dump that belong to it but
// carry no frame: lock lines (`- locked <0x…>`), SMR and JNI summaries,
// the thread-list addresses.
var jstackContext = []string{"- ", "Locked ownable", "JNI global", "Threads class SMR", "_java_thread_list", "0x", "No compile task"}

func isJstackContext(t string) bool {
	if t == "}" {
		return true
	}
	for _, p := range jstackContext {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// hsErrEndBanner ends the thread section of an hs_err file.
const hsErrEndBanner = "---------------  P R O C E S S"
