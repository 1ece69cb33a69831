package scan

import "testing"

// heavyUnderRace skips an exhaustive single-goroutine equivalence test
// under -race, where it takes minutes and the package would pass go
// test's 10-minute default (547 s measured on 2 cores, 2026-12-01): the
// race detector finds nothing in code that runs on one goroutine, and
// .ci/run runs these tests again without -race.
func heavyUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("exhaustive single-goroutine test: run without -race (.ci/run does)")
	}
}
