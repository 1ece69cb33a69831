//go:build race

package itanium

const raceEnabled = true
