package scan

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Doris SIGSEGV whose reason is `unknown detail explain` (neither
// SEGV_MAPERR nor SEGV_ACCERR) at @0x0 is a general protection fault
// (SI_KERNEL): the kernel gives no fault address, so the crash has none
// and says why, while `address not mapped to object (@0x0)` is a null
// access (review: a GP fault read as a null dereference).
func TestGeneralProtectionFault(t *testing.T) {
	const frames = " 0# doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*) at be/src/common/signal_handler.h:421\n" +
		" 1# 0x00007F8FC93CD880 in /lib64/libc.so.6\n" +
		" 2# doris::pipeline::ExchangeSinkLocalState::close(doris::RuntimeState*, doris::Status) at be/src/pipeline/exec/exchange_sink_operator.cpp:759\n"
	for _, tc := range []struct {
		reason, addr string
		hasFault     bool
	}{
		{"unknown detail explain", "0x0", false},
		{"unkown detail explain", "0x0", false},
		{"address not mapped to object", "0x0", true},
		{"unknown detail explain", "0x28", true},
	} {
		text := "*** SIGSEGV " + tc.reason + " (@" + tc.addr + ") received by PID 3836583 (TID 3840122 OR 0x7f840373a700) from PID 0; stack trace: ***\n" + frames
		cs, err := ParseAll(context.Background(), strings.NewReader(text), ScanOptions{})
		require.NoError(t, err)
		require.Len(t, cs, 1)
		c := cs[0]
		assert.Equal(t, "SIGSEGV", c.Signal)
		assert.Equal(t, tc.hasFault, c.HasFaultAddress, "%s @%s", tc.reason, tc.addr)
		gp := false
		for _, n := range c.Notes {
			gp = gp || strings.Contains(n, "general protection fault")
		}
		assert.Equal(t, !tc.hasFault, gp, "%s @%s: the note", tc.reason, tc.addr)
	}
}
