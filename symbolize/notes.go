package symbolize

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// Note types of a Linux ELF core (include/uapi/linux/elf.h).
const (
	ntPRSTATUS = 1
	ntFPREGSET = 2
	ntPRPSINFO = 3
	ntAUXV     = 6
	ntSIGINFO  = 0x53494749
	ntFILE     = 0x46494c45
	ntGNUBuild = 3 // NT_GNU_BUILD_ID, in a "GNU" note of a module
)

// auxv keys used by the core reader.
const (
	atPHDR        = 3
	atENTRY       = 9
	atEXECFN      = 31
	atSYSINFOEHDR = 33
)

// Bounds on note payloads: a note larger than these is corrupt (or hostile)
// and is skipped instead of being read into memory.
const (
	maxNoteDesc    = 64 << 20 // NT_FILE of a process with ~500k mappings
	maxAuxvDesc    = 64 << 10
	maxFileEntries = 1 << 20
	maxPathLen     = 4096
)

// SigInfo is the part of a kernel siginfo_t the core reader decodes.
type SigInfo struct {
	Signo int32 `json:"signo"`
	Errno int32 `json:"errno,omitempty"`
	Code  int32 `json:"code"`
	// Addr is si_addr for the kernel-generated SIGSEGV, SIGBUS, SIGFPE,
	// SIGILL and SIGTRAP (Code > 0); zero otherwise.
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
	if s.Code <= 0 {
		return false
	}
	switch s.Signo {
	case 4, 5, 7, 8, 11: // SIGILL SIGTRAP SIGBUS SIGFPE SIGSEGV
		return true
	}
	return false
}

func parseSigInfo(b []byte) SigInfo {
	if len(b) < 24 {
		return SigInfo{}
	}
	le := binary.LittleEndian
	s := SigInfo{
		Signo: int32(le.Uint32(b[0:])),
		Errno: int32(le.Uint32(b[4:])),
		Code:  int32(le.Uint32(b[8:])),
	}
	if s.hasAddr() {
		s.Addr = Addr(le.Uint64(b[16:]))
	} else if s.Code <= 0 {
		s.SenderPID = int32(le.Uint32(b[16:]))
		s.SenderUID = le.Uint32(b[20:])
	}
	return s
}

// x86-64 user_regs_struct order, as in NT_PRSTATUS pr_reg.
const (
	xR15 = iota
	xR14
	xR13
	xR12
	xRBP
	xRBX
	xR11
	xR10
	xR9
	xR8
	xRAX
	xRCX
	xRDX
	xRSI
	xRDI
	xOrigRAX
	xRIP
	xCS
	xEFLAGS
	xRSP
	xSS
	xFSBase
	xGSBase
	xNumRegs = 27
)

// DWARF register numbers of x86-64 for the user_regs_struct slots above.
var amd64DwarfOfPrReg = [...]struct{ pr, dw int }{
	{xRAX, 0}, {xRDX, 1}, {xRCX, 2}, {xRBX, 3}, {xRSI, 4}, {xRDI, 5}, {xRBP, 6}, {xRSP, 7},
	{xR8, 8}, {xR9, 9}, {xR10, 10}, {xR11, 11}, {xR12, 12}, {xR13, 13}, {xR14, 14}, {xR15, 15},
	{xRIP, 16},
}

const (
	prstatusSize   = 336
	prstatusRegOff = 112
	prpsinfoSize   = 136
)

// prstatus is one NT_PRSTATUS note (x86-64 layout).
type prstatus struct {
	info   SigInfo // pr_info: signo/code/errno only
	cursig int16
	pid    int32
	ppid   int32
	regs   [xNumRegs]uint64
}

func parsePrstatus(b []byte) (prstatus, bool) {
	if len(b) < prstatusRegOff+xNumRegs*8 {
		return prstatus{}, false
	}
	le := binary.LittleEndian
	p := prstatus{
		info:   SigInfo{Signo: int32(le.Uint32(b[0:])), Code: int32(le.Uint32(b[4:])), Errno: int32(le.Uint32(b[8:]))},
		cursig: int16(le.Uint16(b[12:])),
		pid:    int32(le.Uint32(b[32:])),
		ppid:   int32(le.Uint32(b[36:])),
	}
	for i := range p.regs {
		p.regs[i] = le.Uint64(b[prstatusRegOff+8*i:])
	}
	return p, true
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

func parsePrpsinfo(b []byte) (PsInfo, bool) {
	if len(b) < prpsinfoSize {
		return PsInfo{}, false
	}
	le := binary.LittleEndian
	return PsInfo{
		UID:   le.Uint32(b[16:]),
		PID:   int32(le.Uint32(b[24:])),
		PPID:  int32(le.Uint32(b[28:])),
		Fname: cstring(b[40:56]),
		Args:  string(bytes.TrimRight([]byte(cstring(b[56:136])), " ")),
	}, true
}

func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// fileMapping is one NT_FILE entry: [Start,End) maps Path from file offset Offset.
type fileMapping struct {
	Start, End, Offset uint64
	Path               string
}

func parseNTFile(b []byte) ([]fileMapping, error) {
	le := binary.LittleEndian
	if len(b) < 16 {
		return nil, fmt.Errorf("NT_FILE: %d bytes", len(b))
	}
	count, page := le.Uint64(b), le.Uint64(b[8:])
	if count > maxFileEntries || 16+count*24 > uint64(len(b)) {
		return nil, fmt.Errorf("NT_FILE: %d entries do not fit in %d bytes", count, len(b))
	}
	out := make([]fileMapping, count)
	off := 16
	for i := range out {
		out[i] = fileMapping{Start: le.Uint64(b[off:]), End: le.Uint64(b[off+8:]), Offset: le.Uint64(b[off+16:]) * page}
		off += 24
	}
	names := b[off:]
	for i := range out {
		j := bytes.IndexByte(names, 0)
		if j < 0 {
			j = len(names)
		}
		if j > maxPathLen {
			return nil, fmt.Errorf("NT_FILE: path of %d bytes", j)
		}
		out[i].Path = string(names[:j])
		if j < len(names) {
			names = names[j+1:]
		} else {
			names = nil
		}
	}
	return out, nil
}

// rawNote is one note header with the location of its payload.
type rawNote struct {
	name string
	typ  uint32
	off  int64 // payload offset in the core
	size int64
}

// walkNotes calls fn for every note of the PT_NOTE segment [off, off+size)
// of r, in file order. It stops at the first malformed header and reports
// it; notes before it have been delivered. It never reads payloads.
func walkNotes(r io.ReaderAt, off, size int64, fn func(rawNote) error) error {
	var hdr [12]byte
	end := off + size
	for p := off; p+12 <= end; {
		if _, err := r.ReadAt(hdr[:], p); err != nil {
			return fmt.Errorf("note header at %#x: %w", p, err)
		}
		le := binary.LittleEndian
		namesz, descsz, typ := int64(le.Uint32(hdr[0:])), int64(le.Uint32(hdr[4:])), le.Uint32(hdr[8:])
		p += 12
		if namesz > 256 || p+namesz > end {
			return fmt.Errorf("note at %#x: bad name size %d", p-12, namesz)
		}
		var name string
		if namesz > 0 {
			nb := make([]byte, namesz)
			if _, err := r.ReadAt(nb, p); err != nil {
				return fmt.Errorf("note name at %#x: %w", p, err)
			}
			name = cstring(nb)
		}
		p += align4(namesz)
		if descsz > end-p {
			return fmt.Errorf("note %q type %#x at %#x: payload of %d bytes overruns its segment", name, typ, p, descsz)
		}
		if err := fn(rawNote{name: name, typ: typ, off: p, size: descsz}); err != nil {
			return err
		}
		p += align4(descsz)
	}
	return nil
}

func align4(n int64) int64 { return (n + 3) &^ 3 }

// readNoteDesc reads a payload of at most limit bytes.
func readNoteDesc(r io.ReaderAt, n rawNote, limit int64) ([]byte, error) {
	if n.size > limit {
		return nil, fmt.Errorf("note %q type %#x: %d bytes exceeds the %d-byte limit", n.name, n.typ, n.size, limit)
	}
	b := make([]byte, n.size)
	if _, err := r.ReadAt(b, n.off); err != nil {
		return nil, fmt.Errorf("note %q type %#x: %w", n.name, n.typ, err)
	}
	return b, nil
}

// parseBuildIDNotes finds NT_GNU_BUILD_ID in a buffer of ELF notes.
func parseBuildIDNotes(b []byte) string {
	le := binary.LittleEndian
	for len(b) >= 12 {
		namesz, descsz, typ := uint64(le.Uint32(b)), uint64(le.Uint32(b[4:])), le.Uint32(b[8:])
		b = b[12:]
		na, da := (namesz+3)&^3, (descsz+3)&^3
		if na > uint64(len(b)) || namesz > na {
			return ""
		}
		name := cstring(b[:namesz])
		b = b[na:]
		if da > uint64(len(b)) || descsz > da {
			return ""
		}
		if name == "GNU" && typ == ntGNUBuild && descsz > 0 && descsz <= 64 {
			return fmt.Sprintf("%x", b[:descsz])
		}
		b = b[da:]
	}
	return ""
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
	case 0x80:
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
