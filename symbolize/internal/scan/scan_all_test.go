package scan

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// endless is a reader that never ends: the same crash over and over.
type endless struct{ off int }

const endlessCrash = "*** Aborted at 1651201942 (unix time) try \"date -d @1651201942\" if you are using GNU date ***\n" +
	"PC: @          0x282b844 starrocks::pipeline::PipelineDriver::_mark_operator_finishing()\n" +
	"*** SIGSEGV (@0x0) received by PID 15670 (TID 0x7fca98ad0700) from PID 0; stack trace: ***\n" +
	"    @          0x282b844 starrocks::pipeline::PipelineDriver::_mark_operator_finishing()\n" +
	"    @     0x7fcb31a5b8dd __clone\n"

func (e *endless) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		c := copy(b[n:], endlessCrash[e.off:])
		n += c
		e.off = (e.off + c) % len(endlessCrash)
	}
	return n, nil
}

// Breaking out of All must not leave the live reader goroutine running.
func TestAllBreakStopsReader(t *testing.T) {
	before := runtime.NumGoroutine()
	for range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		sc := NewScanner(&endless{}, ScanOptions{IdleTimeout: time.Second})
		n := 0
		for c := range sc.All(ctx) {
			assert.Equal(t, "SIGSEGV", c.Signal)
			if n++; n == 3 {
				break
			}
		}
		cancel()
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before+2, "reader goroutines left behind")
}
