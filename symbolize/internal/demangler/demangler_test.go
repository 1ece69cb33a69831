package demangler

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ianlancetaylor/demangle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// names are real symbols of the backends (glog, gdb and ASAN frames of
// testdata/corpus) and shapes the fast path leaves to the reference.
var names = []string{
	"_ZNSt17_Function_handlerIFvvEZN9starrocks8ScanNode17submit_scan_tasksEiEUlvE_E9_M_invokeERKSt9_Any_data",
	"_ZNSt6thread11_State_implINS_8_InvokerISt5tupleIJZN9starrocks12EvHttpServer5startEvEUlvE_EEEEE6_M_runEv",
	"_ZN9starrocks4lake11vacuum_mainEv",
	"_ZZN9starrocks8pipeline12ScanOperator18_trigger_next_scanEPNS_12RuntimeStateEiENKUlRT_E_clINS_9workgroup12YieldContextEEEDaS5_.constprop.0",
	"_ZNSt6thread11_State_implINS_8_InvokerISt5tupleIJZN9starrocks13StorageEngine14load_data_dirsERKSt6vectorIPNS3_7DataDirESaIS7_EEEUlvE_EEEEE6_M_runEv",
	"_ZZSt9call_onceIZN9starrocks4Expr14evaluate_constEPNS0_11ExprContextEEUlvE_JEEvRSt9once_flagOT_DpOT0_ENUlvE0_4_FUNEv",
	"_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE8_M_checkEmPKc",
	"_ZN9__gnu_cxx27__verbose_terminate_handlerEv",
	"_ZN5doris6Thread12start_threadEPv.isra.0",
	"_Z27check_required_instructionsv",
}

func TestDemangleMatchesReference(t *testing.T) {
	for _, n := range names {
		want, err := demangle.ToString(n, demangle.MaxLength(16))
		require.NoError(t, err, n)
		got, ok := Demangle(n)
		assert.True(t, ok, n)
		assert.Equal(t, want, got, n)
	}
}

func TestDemangleCloneSuffix(t *testing.T) {
	got, ok := Demangle("_ZN5doris6Thread12start_threadEPv.isra.0")
	require.True(t, ok)
	assert.Equal(t, "doris::Thread::start_thread(void*) [clone .isra.0]", got)
}

func TestDemangleRefuses(t *testing.T) {
	for _, n := range []string{"", "main", "_Z", "_ZN", "_ZN5doris", "doris::Thread::start_thread(void*)", "_Zx", "__cxa_throw",
		"_ZN" + strings.Repeat("9starrocks", 2000) + "E"} {
		got, ok := Demangle(n)
		assert.False(t, ok, n)
		assert.Equal(t, n, got, "a refused name comes back unchanged")
	}
}

func TestIsMangled(t *testing.T) {
	for n, want := range map[string]bool{
		"_ZN9starrocks17RunLightTimerTaskEPv": true,
		"_ZN9starrocks4lake11vacuum_mainEv":   true,
		"_Z27check_required_instructionsv":    true,
		"_ZL10abort_testv":                    true,
		"_Z":                                  false,
		"_Zx":                                 false,
		"ZN5doris":                            false,
		"doris::Thread::start_thread":         false,
	} {
		assert.Equal(t, want, IsMangled(n), n)
	}
}

// TestDemanglerSameAsDemangle: the cache changes no answer, also once it
// has been emptied and refilled, and under concurrent use (-race).
func TestDemanglerSameAsDemangle(t *testing.T) {
	d := New(32) // 2 names per shard: the shards are emptied over and over
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				for _, n := range names {
					want, wantOK := Demangle(n)
					got, ok := d.Demangle(n)
					assert.Equal(t, want, got)
					assert.Equal(t, wantOK, ok)
					assert.Equal(t, want, d.Once(n))
				}
			}
		}()
	}
	wg.Wait()
}

// TestDemanglerBounded: a stream of distinct names never holds more than
// the limit (per shard) in the cache.
func TestDemanglerBounded(t *testing.T) {
	d := New(64)
	for i := 0; i < 5000; i++ {
		n := fmt.Sprintf("_ZN5doris%dX%dEv", len(fmt.Sprint(i))+1, i)
		d.Demangle(n)
	}
	for i := range d.shards {
		assert.LessOrEqual(t, len(d.shards[i].cache), d.limit)
	}
	assert.Equal(t, 4, d.limit, "64 names over 16 shards")
}

// FuzzDemangle: no panic; the cached and uncached forms agree; a name
// that is not mangled comes back unchanged; output is deterministic.
func FuzzDemangle(f *testing.F) {
	for _, n := range names {
		f.Add(n)
	}
	f.Add("_ZN5doris")
	d := New(0)
	f.Fuzz(func(t *testing.T, name string) {
		got, ok := Demangle(name)
		again, ok2 := Demangle(name)
		if got != again || ok != ok2 {
			t.Fatalf("not deterministic: %q", name)
		}
		if c, cok := d.Demangle(name); c != got || cok != ok {
			t.Fatalf("cache differs for %q: %q vs %q", name, c, got)
		}
		if !IsMangled(name) && (ok || got != name) {
			t.Fatalf("unmangled %q changed to %q", name, got)
		}
	})
}
