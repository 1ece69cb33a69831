package unwind

import (
	"debug/elf"
	"encoding/binary"
	"fmt"

	"github.com/go-delve/delve/pkg/dwarf/frame"
)

// CFI holds the call frame information of one module at link-time
// addresses: .eh_frame through its .eh_frame_hdr index (FDEs parsed on
// demand), or fully parsed when there is no usable index; .debug_frame
// (own or from the debug file) is parsed on the first PC .eh_frame misses.
// A nil *CFI has no entries. A CFI is not safe for concurrent use.
type CFI struct {
	hdr         *ehHdrIndex
	eh          frame.FrameDescriptionEntries
	debug       frame.FrameDescriptionEntries
	debugLoaded bool
	loadDebug   func() frame.FrameDescriptionEntries
}

// NewCFI prepares the CFI of the module file ef. debugELF, called at most
// once and only when ef has no .debug_frame, returns the module's debug
// file (nil if none) for its .debug_frame. warn receives a malformed
// .eh_frame's error (the entries parsed before it are kept).
func NewCFI(ef *elf.File, debugELF func() *elf.File, warn func(error)) *CFI {
	t := &CFI{hdr: newEHHdrIndex(ef)}
	if t.hdr == nil {
		if b, addr, ok := sectionData(ef, ".eh_frame"); ok && addr != 0 {
			fdes, err := parseFDEs(b, addr)
			if err != nil {
				warn(err)
			}
			t.eh = fdes
		}
	}
	t.loadDebug = func() frame.FrameDescriptionEntries {
		src := ef
		if src.Section(".debug_frame") == nil {
			src = debugELF()
		}
		if src == nil {
			return nil
		}
		if b, _, ok := sectionData(src, ".debug_frame"); ok {
			if fdes, err := parseFDEs(b, 0); err == nil {
				return fdes
			}
		}
		return nil
	}
	return t
}

// parseFDEs runs delve's CFI parser, turning its panics on malformed input
// into errors.
func parseFDEs(data []byte, ehAddr uint64) (fdes frame.FrameDescriptionEntries, err error) {
	defer func() {
		if p := recover(); p != nil {
			fdes, err = nil, fmt.Errorf("malformed CFI: %v", p)
		}
	}()
	fdes, err = frame.Parse(data, binary.LittleEndian, 0, 8, ehAddr)
	if err != nil {
		return nil, err
	}
	// Parse keeps section order; FDEForPC needs them sorted (Append sorts).
	return frame.FrameDescriptionEntries(nil).Append(fdes), nil
}

// maxCFISection bounds a CFI section read whole.
const maxCFISection = 512 << 20

// sectionData returns the contents and address of ef's section name.
func sectionData(ef *elf.File, name string) ([]byte, uint64, bool) {
	s := ef.Section(name)
	if s == nil || s.Type == elf.SHT_NOBITS || s.Size == 0 || s.Size > maxCFISection {
		return nil, 0, false
	}
	b, err := s.Data()
	if err != nil {
		return nil, 0, false
	}
	return b, s.Addr, true
}

// fdeFor returns the FDE covering the link-time address pc, or nil.
func (t *CFI) fdeFor(pc uint64) *frame.FrameDescriptionEntry {
	if t == nil {
		return nil
	}
	if t.hdr != nil {
		if f := t.hdr.fdeFor(pc); f != nil {
			return f
		}
	} else if f, err := t.eh.FDEForPC(pc); err == nil {
		return f
	}
	if !t.debugLoaded {
		t.debugLoaded = true
		t.debug = t.loadDebug()
	}
	if f, err := t.debug.FDEForPC(pc); err == nil {
		return f
	}
	return nil
}

// establish runs the FDE's CFA program up to pc, recovering from panics of
// the CFA interpreter on malformed programs.
func establish(fde *frame.FrameDescriptionEntry, pc uint64) (fc *frame.FrameContext, err error) {
	defer func() {
		if p := recover(); p != nil {
			fc, err = nil, fmt.Errorf("malformed CFA program: %v", p)
		}
	}()
	return fde.EstablishFrame(pc)
}
