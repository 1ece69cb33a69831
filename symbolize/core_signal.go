package symbolize

import (
	"fmt"

	"github.com/crashsig/crashsig/symbolize/internal/corefile"
)

// SigInfo is the part of a kernel siginfo_t the core reader decodes.
type SigInfo struct {
	Signo int32 `json:"signo"`
	Errno int32 `json:"errno,omitempty"`
	Code  int32 `json:"code"`
	// Addr is si_addr for the kernel-generated SIGSEGV, SIGBUS, SIGFPE,
	// SIGILL and SIGTRAP (Code > 0, except SI_KERNEL: a general protection
	// fault has no address); zero otherwise.
	Addr Addr `json:"addr,omitempty"`
	// SenderPID and SenderUID are set for signals sent by kill/tkill
	// (Code ≤ 0).
	SenderPID int32  `json:"sender_pid,omitempty"`
	SenderUID uint32 `json:"sender_uid,omitempty"`
}

// KernelGenerated reports whether the kernel raised the signal for a fault
// (si_code > 0), i.e. whether Addr is meaningful.
func (s SigInfo) KernelGenerated() bool { return s.Code > 0 }

// hasAddr reports whether si_addr is part of this siginfo.
func (s SigInfo) hasAddr() bool {
	return corefile.SigInfo{Signo: s.Signo, Code: s.Code}.HasAddr()
}

// parseSigInfo decodes an x86-64 siginfo_t into its public form.
func parseSigInfo(b []byte) SigInfo {
	return sigInfoOf(corefile.ParseSigInfo(b))
}

// sigInfoOf is the public form of a decoded siginfo.
func sigInfoOf(s corefile.SigInfo) SigInfo {
	return SigInfo{Signo: s.Signo, Errno: s.Errno, Code: s.Code, Addr: Addr(s.Addr), SenderPID: s.SenderPID, SenderUID: s.SenderUID}
}

// PsInfo is the process description of NT_PRPSINFO.
type PsInfo struct {
	PID  int32  `json:"pid"`
	PPID int32  `json:"ppid"`
	UID  uint32 `json:"uid"`
	// Fname is the kernel comm of the process (16 bytes at most).
	Fname string `json:"fname"`
	// Args is the start of the command line (80 bytes at most), arguments
	// separated by spaces.
	Args string `json:"args"`
}

// signalNames maps Linux x86-64/arm64 signal numbers to names.
var signalNames = [...]string{
	1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT",
	7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2",
	13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM", 16: "SIGSTKFLT", 17: "SIGCHLD", 18: "SIGCONT",
	19: "SIGSTOP", 20: "SIGTSTP", 21: "SIGTTIN", 22: "SIGTTOU", 23: "SIGURG", 24: "SIGXCPU",
	25: "SIGXFSZ", 26: "SIGVTALRM", 27: "SIGPROF", 28: "SIGWINCH", 29: "SIGIO", 30: "SIGPWR", 31: "SIGSYS",
}

// SignalName returns the name of a Linux signal number ("SIGSEGV"), or
// "SIG<n>" for numbers it does not know.
func SignalName(n int32) string {
	if n > 0 && int(n) < len(signalNames) && signalNames[n] != "" {
		return signalNames[n]
	}
	return fmt.Sprintf("SIG%d", n)
}

// SignalCodeName returns the symbolic si_code of a signal ("SEGV_MAPERR",
// "SI_TKILL"), or "" when unknown.
func SignalCodeName(signo, code int32) string {
	switch code {
	case 0:
		return "SI_USER"
	case corefile.SIKernel:
		return "SI_KERNEL"
	case -1:
		return "SI_QUEUE"
	case -6:
		return "SI_TKILL"
	}
	if code > 0 {
		var names []string
		switch signo {
		case 11:
			names = []string{"", "SEGV_MAPERR", "SEGV_ACCERR", "SEGV_BNDERR", "SEGV_PKUERR"}
		case 7:
			names = []string{"", "BUS_ADRALN", "BUS_ADRERR", "BUS_OBJERR", "BUS_MCEERR_AR", "BUS_MCEERR_AO"}
		case 8:
			names = []string{"", "FPE_INTDIV", "FPE_INTOVF", "FPE_FLTDIV", "FPE_FLTOVF", "FPE_FLTUND", "FPE_FLTRES", "FPE_FLTINV", "FPE_FLTSUB"}
		case 4:
			names = []string{"", "ILL_ILLOPC", "ILL_ILLOPN", "ILL_ILLADR", "ILL_ILLTRP", "ILL_PRVOPC", "ILL_PRVREG", "ILL_COPROC", "ILL_BADSTK"}
		}
		if int(code) < len(names) {
			return names[code]
		}
	}
	return ""
}
