//go:build !race

package itanium

const raceEnabled = false
