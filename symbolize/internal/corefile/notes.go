package corefile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// Note types of a Linux ELF core (include/uapi/linux/elf.h).
const (
	NTPrstatus   = 1
	NTFPRegSet   = 2
	NTPrpsinfo   = 3
	NTAuxv       = 6
	NTSiginfo    = 0x53494749
	NTFile       = 0x46494c45
	NTGNUBuildID = 3 // NT_GNU_BUILD_ID, in a "GNU" note of a module
)

// auxv keys used by the core reader.
const (
	AtPHDR        = 3
	AtEntry       = 9
	AtExecFn      = 31
	AtSysinfoEHdr = 33
)

// Bounds on note payloads: a note larger than these is corrupt (or hostile)
// and is skipped instead of being read into memory.
const (
	MaxNoteDesc    = 64 << 20 // NT_FILE of a process with ~500k mappings
	MaxAuxvDesc    = 64 << 10
	maxFileEntries = 1 << 20
	MaxPathLen     = 4096
)

// SigInfo is the part of a kernel siginfo_t the core reader decodes
// (symbolize.SigInfo is its public form).
type SigInfo struct {
	Signo, Errno, Code int32
	// Addr is si_addr when HasAddr.
	Addr uint64
	// SenderPID and SenderUID are set for signals sent by kill/tkill
	// (Code ≤ 0).
	SenderPID int32
	SenderUID uint32
}

// SIKernel is si_code SI_KERNEL: a signal the kernel sent without fault
// details. A general protection fault (a non-canonical address, a
// privileged instruction) is SIGSEGV with SI_KERNEL and si_addr 0.
const SIKernel = 0x80

// HasAddr reports whether si_addr is part of this siginfo: a
// kernel-generated (Code > 0) SIGILL, SIGTRAP, SIGBUS, SIGFPE or SIGSEGV
// other than SI_KERNEL, whose si_addr is 0 whatever the faulting access.
func (s SigInfo) HasAddr() bool {
	if s.Code <= 0 || s.Code == SIKernel {
		return false
	}
	switch s.Signo {
	case 4, 5, 7, 8, 11: // SIGILL SIGTRAP SIGBUS SIGFPE SIGSEGV
		return true
	}
	return false
}

// ParseSigInfo decodes an x86-64 siginfo_t (NT_SIGINFO payload, or the
// siginfo of a signal frame); fewer than 24 bytes give the zero SigInfo.
func ParseSigInfo(b []byte) SigInfo {
	if len(b) < 24 {
		return SigInfo{}
	}
	le := binary.LittleEndian
	s := SigInfo{
		Signo: int32(le.Uint32(b[0:])),
		Errno: int32(le.Uint32(b[4:])),
		Code:  int32(le.Uint32(b[8:])),
	}
	if s.HasAddr() {
		s.Addr = le.Uint64(b[16:])
	} else if s.Code <= 0 {
		s.SenderPID = int32(le.Uint32(b[16:]))
		s.SenderUID = le.Uint32(b[20:])
	}
	return s
}

// x86-64 user_regs_struct order, as in NT_PRSTATUS pr_reg.
const (
	R15 = iota
	R14
	R13
	R12
	RBP
	RBX
	R11
	R10
	R9
	R8
	RAX
	RCX
	RDX
	RSI
	RDI
	OrigRAX
	RIP
	CS
	EFLAGS
	RSP
	SS
	FSBase
	GSBase
	NumRegs = 27
)

// DWARF register numbers of x86-64 for the user_regs_struct slots above.
var DwarfOfPrReg = [...]struct{ PrReg, DWARFReg int }{
	{RAX, 0}, {RDX, 1}, {RCX, 2}, {RBX, 3}, {RSI, 4}, {RDI, 5}, {RBP, 6}, {RSP, 7},
	{R8, 8}, {R9, 9}, {R10, 10}, {R11, 11}, {R12, 12}, {R13, 13}, {R14, 14}, {R15, 15},
	{RIP, 16},
}

const (
	PrstatusSize   = 336
	PrstatusRegOff = 112
	prpsinfoSize   = 136
)

// Prstatus is one NT_PRSTATUS note (x86-64 layout).
type Prstatus struct {
	info   SigInfo // pr_info: signo/code/errno only
	CurSig int16
	PID    int32
	ppid   int32
	Regs   [NumRegs]uint64
}

// ParsePrstatus decodes an x86-64 NT_PRSTATUS payload; false if it is too short.
func ParsePrstatus(b []byte) (Prstatus, bool) {
	if len(b) < PrstatusRegOff+NumRegs*8 {
		return Prstatus{}, false
	}
	le := binary.LittleEndian
	p := Prstatus{
		info:   SigInfo{Signo: int32(le.Uint32(b[0:])), Code: int32(le.Uint32(b[4:])), Errno: int32(le.Uint32(b[8:]))},
		CurSig: int16(le.Uint16(b[12:])),
		PID:    int32(le.Uint32(b[32:])),
		ppid:   int32(le.Uint32(b[36:])),
	}
	for i := range p.Regs {
		p.Regs[i] = le.Uint64(b[PrstatusRegOff+8*i:])
	}
	return p, true
}

// PsInfo is the process description of NT_PRPSINFO (symbolize.PsInfo is
// its public form).
type PsInfo struct {
	PID  int32
	PPID int32
	UID  uint32
	// Fname is the kernel comm of the process (16 bytes at most).
	Fname string
	// Args is the start of the command line (80 bytes at most), arguments
	// separated by spaces.
	Args string
}

// ParsePrpsinfo decodes an x86-64 NT_PRPSINFO payload.
func ParsePrpsinfo(b []byte) (PsInfo, bool) {
	if len(b) < prpsinfoSize {
		return PsInfo{}, false
	}
	le := binary.LittleEndian
	return PsInfo{
		UID:   le.Uint32(b[16:]),
		PID:   int32(le.Uint32(b[24:])),
		PPID:  int32(le.Uint32(b[28:])),
		Fname: CString(b[40:56]),
		Args:  string(bytes.TrimRight([]byte(CString(b[56:136])), " ")),
	}, true
}

// CString returns b up to its first NUL byte.
func CString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// FileMapping is one NT_FILE entry: [Start,End) maps Path from file offset Offset.
type FileMapping struct {
	Start, End, Offset uint64
	Path               string
}

// ParseNTFile decodes an NT_FILE payload: its mappings in note order.
// Entry counts and path lengths are bounded (1M entries, 4096 bytes).
func ParseNTFile(b []byte) ([]FileMapping, error) {
	le := binary.LittleEndian
	if len(b) < 16 {
		return nil, fmt.Errorf("NT_FILE: %d bytes", len(b))
	}
	count, page := le.Uint64(b), le.Uint64(b[8:])
	if count > maxFileEntries || 16+count*24 > uint64(len(b)) {
		return nil, fmt.Errorf("NT_FILE: %d entries do not fit in %d bytes", count, len(b))
	}
	out := make([]FileMapping, count)
	off := 16
	for i := range out {
		out[i] = FileMapping{Start: le.Uint64(b[off:]), End: le.Uint64(b[off+8:]), Offset: le.Uint64(b[off+16:]) * page}
		off += 24
	}
	names := b[off:]
	for i := range out {
		j := bytes.IndexByte(names, 0)
		if j < 0 {
			j = len(names)
		}
		if j > MaxPathLen {
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

// Note is one note header with the location of its payload.
type Note struct {
	Name string
	Type uint32
	Off  int64 // payload offset in the core
	Size int64
}

// WalkNotes calls fn for every note of the PT_NOTE segment [off, off+size)
// of r, in file order. It stops at the first malformed header and reports
// it; notes before it have been delivered. It never reads payloads.
func WalkNotes(r io.ReaderAt, off, size int64, fn func(Note) error) error {
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
			name = CString(nb)
		}
		p += align4(namesz)
		if descsz > end-p {
			return fmt.Errorf("note %q type %#x at %#x: payload of %d bytes overruns its segment", name, typ, p, descsz)
		}
		if err := fn(Note{Name: name, Type: typ, Off: p, Size: descsz}); err != nil {
			return err
		}
		p += align4(descsz)
	}
	return nil
}

func align4(n int64) int64 { return (n + 3) &^ 3 }

// ReadNoteDesc reads a payload of at most limit bytes.
func ReadNoteDesc(r io.ReaderAt, n Note, limit int64) ([]byte, error) {
	if n.Size > limit {
		return nil, fmt.Errorf("note %q type %#x: %d bytes exceeds the %d-byte limit", n.Name, n.Type, n.Size, limit)
	}
	b := make([]byte, n.Size)
	if _, err := r.ReadAt(b, n.Off); err != nil {
		return nil, fmt.Errorf("note %q type %#x: %w", n.Name, n.Type, err)
	}
	return b, nil
}

// BuildIDFromNotes finds NT_GNU_BUILD_ID in a buffer of ELF notes.
func BuildIDFromNotes(b []byte) string {
	le := binary.LittleEndian
	for len(b) >= 12 {
		namesz, descsz, typ := uint64(le.Uint32(b)), uint64(le.Uint32(b[4:])), le.Uint32(b[8:])
		b = b[12:]
		na, da := (namesz+3)&^3, (descsz+3)&^3
		if na > uint64(len(b)) || namesz > na {
			return ""
		}
		name := CString(b[:namesz])
		b = b[na:]
		if da > uint64(len(b)) || descsz > da {
			return ""
		}
		if name == "GNU" && typ == NTGNUBuildID && descsz > 0 && descsz <= 64 {
			return fmt.Sprintf("%x", b[:descsz])
		}
		b = b[da:]
	}
	return ""
}
