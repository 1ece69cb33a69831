package scan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parseGDBFrame reads the `(module+0xoffset)` and `(inlined)` that
// crashsig's core text (symbolize.WriteCoreText) puts on a frame, and
// leaves a gdb argument list that happens to hold `+0x` alone.
func TestCoreTextFrame(t *testing.T) {
	p := &parser{}
	for _, tc := range []struct {
		line, fn, file, module string
		offset                 Addr
		inlined                bool
	}{
		{"#0  0x000055ea64be73d0 in starrocks::decode_value<int> (inlined) at /x/backend_sim.cpp:83 (sim_fp+0x53d0)", "starrocks::decode_value<int>", "/x/backend_sim.cpp", "sim_fp", 0x53d0, true},
		{"#4  0x00007f9c25d3c1f5 in start_thread at ./nptl/pthread_create.c:442 (libc.so.6+0x891f5)", "start_thread", "./nptl/pthread_create.c", "libc.so.6", 0x891f5, false},
		{"#1  0x0000000000401136 in f (p=q+0x10) at a.cc:3", "f", "a.cc", "", 0, false},
		{"#1  0x0000000000401136 in g (p=q+0x2)", "g", "", "", 0, false},
	} {
		f, ok := p.parseGDBFrame(tc.line)
		require.True(t, ok, tc.line)
		assert.Equal(t, tc.fn, f.Function, tc.line)
		assert.Equal(t, tc.file, f.File, tc.line)
		assert.Equal(t, tc.module, f.Module, tc.line)
		assert.Equal(t, tc.offset, f.Offset, tc.line)
		assert.Equal(t, tc.module != "", f.HasOffset, tc.line)
		assert.Equal(t, tc.inlined, f.Inlined, tc.line)
	}
}
