//go:build race

package scan

// raceEnabled is true under -race: the exhaustive single-goroutine
// equivalence tests skip there (heavyUnderRace) and .ci/run runs them
// without -race.
const raceEnabled = true
