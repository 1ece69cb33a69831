package scan

// Doris boost::stacktrace signal dumps (F1, Doris 1.1 → 4.x), formats spec
// §4 F1. Frames (` 4# name at file:line`, ` 3# 0x00007F… in /lib64/libc.so.6`)
// are parsed by parseBoostFrame; the header lines are below. The signal line
// is shared with glog dumps (F2) and lives in glogRules: the reason text
// ("address not mapped to object") is what makes it F1.
var boostRules = []lineRule{
	{id: "F1.h_query", kind: kQueryID, prefix: "*** Query id: ",
		re: mustCompile(`^(?:\*\*\* )?Query id: ([0-9a-fA-F]+-[0-9a-fA-F]+)`)},
	{id: "F1.h_nereids", kind: kNereids, prefix: "*** is nereids: ",
		re: mustCompile(`^(?:\*\*\* )?is nereids: (-?\d+)`)},
	{id: "F1.h_tablet", kind: kTablet, prefix: "*** tablet id: ",
		re: mustCompile(`^(?:\*\*\* )?tablet id: (-?\d+)`)},
	{id: "F1.h_commit", kind: kCommit, prefix: "*** Current BE git commitID: ",
		re: mustCompile(`^(?:\*\*\* )?Current BE git commitID: (\S*)`)},
	// Shared by F1 and F2: the only timestamp inside a dump. Pastes replace
	// the straight quotes with curly ones or drop the suffix.
	{id: "X.aborted_at", kind: kAbortedAt, prefix: "*** Aborted at ",
		re: mustCompile(`^(?:\*\*\* )?Aborted at (\d+)`)},
}
