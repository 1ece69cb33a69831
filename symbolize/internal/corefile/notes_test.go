package corefile

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var le = binary.LittleEndian

// note encodes one ELF note.
func note(name string, typ uint32, desc []byte) []byte {
	nb := append([]byte(name), 0)
	b := le.AppendUint32(nil, uint32(len(nb)))
	b = le.AppendUint32(b, uint32(len(desc)))
	b = le.AppendUint32(b, typ)
	b = append(b, nb...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	b = append(b, desc...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// TestWalkNotes walks three notes, then a segment cut inside the third
// one's payload: the first two are delivered, then the error.
func TestWalkNotes(t *testing.T) {
	seg := append(append(note("CORE", NTPrstatus, make([]byte, PrstatusSize)), note("CORE", NTSiginfo, make([]byte, 128))...), note("LINUX", 0x202, []byte{1, 2, 3})...)
	var got []Note
	require.NoError(t, WalkNotes(bytes.NewReader(seg), 0, int64(len(seg)), func(n Note) error {
		got = append(got, n)
		return nil
	}))
	require.Len(t, got, 3)
	assert.Equal(t, "CORE", got[0].Name)
	assert.Equal(t, uint32(NTPrstatus), got[0].Type)
	assert.Equal(t, int64(PrstatusSize), got[0].Size)
	assert.Equal(t, "LINUX", got[2].Name)
	desc, err := ReadNoteDesc(bytes.NewReader(seg), got[2], 16)
	require.NoError(t, err)
	assert.Equal(t, []byte{1, 2, 3}, desc)
	_, err = ReadNoteDesc(bytes.NewReader(seg), got[0], 16)
	assert.ErrorContains(t, err, "exceeds the 16-byte limit")

	got = nil
	err = WalkNotes(bytes.NewReader(seg), 0, int64(len(seg)-2), func(n Note) error {
		got = append(got, n)
		return nil
	})
	assert.ErrorContains(t, err, "overruns its segment")
	assert.Len(t, got, 2)
}

// TestParsePrstatus reads the pid, the current signal and the registers.
func TestParsePrstatus(t *testing.T) {
	b := make([]byte, PrstatusSize)
	le.PutUint16(b[12:], 11)
	le.PutUint32(b[32:], 4242)
	le.PutUint64(b[PrstatusRegOff+8*RIP:], 0x401000)
	le.PutUint64(b[PrstatusRegOff+8*RSP:], 0x7ff0)
	p, ok := ParsePrstatus(b)
	require.True(t, ok)
	assert.Equal(t, int16(11), p.CurSig)
	assert.Equal(t, int32(4242), p.PID)
	assert.Equal(t, uint64(0x401000), p.Regs[RIP])
	assert.Equal(t, uint64(0x7ff0), p.Regs[RSP])
	_, ok = ParsePrstatus(b[:100])
	assert.False(t, ok)
}

// TestParseSigInfo: a kernel SIGSEGV carries si_addr, a kill() carries the
// sender; short input is the zero value.
func TestParseSigInfo(t *testing.T) {
	b := make([]byte, 128)
	le.PutUint32(b[0:], 11)
	le.PutUint32(b[8:], 1) // SEGV_MAPERR
	le.PutUint64(b[16:], 0x40)
	s := ParseSigInfo(b)
	assert.True(t, s.HasAddr())
	assert.Equal(t, uint64(0x40), s.Addr)
	assert.Zero(t, s.SenderPID)

	le.PutUint32(b[8:], 0) // SI_USER
	le.PutUint32(b[16:], 77)
	le.PutUint32(b[20:], 1000)
	s = ParseSigInfo(b)
	assert.False(t, s.HasAddr())
	assert.Equal(t, int32(77), s.SenderPID)
	assert.Equal(t, uint32(1000), s.SenderUID)
	assert.Equal(t, SigInfo{}, ParseSigInfo(b[:23]))
}

// TestParseNTFile decodes two mappings (offsets in pages) and refuses a
// count that does not fit.
func TestParseNTFile(t *testing.T) {
	b := le.AppendUint64(nil, 2)
	b = le.AppendUint64(b, 4096)
	for _, e := range [][3]uint64{{0x400000, 0x401000, 0}, {0x401000, 0x403000, 1}} {
		b = le.AppendUint64(b, e[0])
		b = le.AppendUint64(b, e[1])
		b = le.AppendUint64(b, e[2])
	}
	b = append(b, "/bin/a\x00/lib/b.so"...)
	fm, err := ParseNTFile(b)
	require.NoError(t, err)
	assert.Equal(t, []FileMapping{{Start: 0x400000, End: 0x401000, Offset: 0, Path: "/bin/a"}, {Start: 0x401000, End: 0x403000, Offset: 4096, Path: "/lib/b.so"}}, fm)
	le.PutUint64(b, 1<<40)
	_, err = ParseNTFile(b)
	assert.Error(t, err)
}

// TestBuildIDFromNotes finds the GNU build-id after another note.
func TestBuildIDFromNotes(t *testing.T) {
	b := append(note("GNU", 5, []byte{1, 2, 3, 4}), note("GNU", NTGNUBuildID, []byte{0xde, 0xad, 0xbe, 0xef})...)
	assert.Equal(t, "deadbeef", BuildIDFromNotes(b))
	assert.Equal(t, "", BuildIDFromNotes(b[:len(b)-6]))
}

// FuzzNotes walks arbitrary bytes as a PT_NOTE segment and decodes every
// payload by its type: errors are fine, panics and payloads over their
// limit are not.
func FuzzNotes(f *testing.F) {
	f.Add(append(note("CORE", NTPrstatus, make([]byte, PrstatusSize)), note("CORE", NTFile, make([]byte, 40))...))
	f.Add(note("CORE", NTSiginfo, make([]byte, 128)))
	f.Add(note("GNU", NTGNUBuildID, []byte{1, 2, 3, 4}))
	f.Fuzz(func(t *testing.T, seg []byte) {
		r := bytes.NewReader(seg)
		_ = WalkNotes(r, 0, int64(len(seg)), func(n Note) error {
			b, err := ReadNoteDesc(r, n, MaxAuxvDesc)
			if err != nil {
				return nil
			}
			if int64(len(b)) > MaxAuxvDesc {
				t.Fatalf("payload of %d bytes", len(b))
			}
			switch n.Type {
			case NTPrstatus:
				ParsePrstatus(b)
			case NTSiginfo:
				ParseSigInfo(b)
			case NTPrpsinfo:
				ParsePrpsinfo(b)
			case NTFile:
				_, _ = ParseNTFile(b)
			}
			return nil
		})
		_ = BuildIDFromNotes(seg)
	})
}

// TestSIKernelHasNoAddr: SIGSEGV with SI_KERNEL (a general protection
// fault) has si_addr 0, which is no fault address.
func TestSIKernelHasNoAddr(t *testing.T) {
	b := make([]byte, 128)
	le.PutUint32(b[0:], 11)
	le.PutUint32(b[8:], SIKernel)
	s := ParseSigInfo(b)
	assert.False(t, s.HasAddr())
	assert.Zero(t, s.Addr)
	assert.Zero(t, s.SenderPID)
	le.PutUint32(b[8:], 1) // SEGV_MAPERR
	assert.True(t, ParseSigInfo(b).HasAddr())
}
