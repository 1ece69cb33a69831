package signature

// Signature is the stable key of one crash and the record of how it was made.
type Signature struct {
	// Algorithm names the signature algorithm and its version (the
	// package's Algorithm constant, e.g. "crashsig-sig/7"). Keys are only
	// comparable under the same Algorithm.
	Algorithm string `json:"algorithm"`
	// Kind is the kind prefix, made only of facts every source of a crash
	// shows: SIGSEGV, SIGFPE, SIGBUS, SIGILL, SIGABRT, CHECK(<expr>),
	// terminate(<type>), ASAN(<bug>), JVM(<...>), THREADS, ... (a null
	// fault address is the attribute fault=null, not part of the kind).
	Kind string `json:"kind"`
	// Frames are the normalized meaningful physical frames, innermost
	// first (inlined frames never enter a key).
	Frames []string `json:"frames"`
	// Key is Kind and Frames joined into one bounded string.
	Key string `json:"key"`
	// ID is a short stable hash of Key.
	ID string `json:"id"`
	// CrashFrame is the first named frame after the mechanism frames
	// (handler, abort path, glog, terminate), prefix frames included: the
	// frame where the crash showed. When the source shows inline frames
	// (cores, gdb, symbolized addresses) it is the innermost inline frame
	// of the crash site, so it can differ between sources while the key
	// does not. Empty when there is none.
	CrashFrame string `json:"crash_frame,omitempty"`
	// AppFrame is the first Doris/StarRocks frame (doris::, starrocks::):
	// the first such key frame, else the first below the key frames (the
	// JNI caller of a crash inside the JVM). Empty when there is none.
	AppFrame string `json:"app_frame,omitempty"`
	// Attributes are facts kept beside the key that did not shape it
	// (fault=null, inlined=<innermost inline frame of the crash site>,
	// leaf=memcpy-family, suspected-heap-corruption, stack-truncated,
	// corrupted).
	Attributes []string `json:"attributes,omitempty"`
	// Trace records every decision taken while building the key.
	Trace []string `json:"trace"`
}
