package scan

// std::terminate (F4): the libstdc++ verbose terminate handler, followed by
// the SIGABRT dump of abort(); formats spec §4 F4. The what() message may
// span several lines (a doris::Exception embeds its own stack trace).
var terminateRules = []lineRule{
	{id: "F4.start", kind: kTerminate, prefix: "terminate called ",
		re: mustCompile(`^terminate called (?:after throwing an instance of '(.+)'|(recursively)|(without an active exception))`)},
	{id: "F4.what", kind: kWhat, prefix: "what():",
		re: mustCompile(`^what\(\):\s*(.*)$`)},
}
