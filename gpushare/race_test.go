//go:build race

package gpushare_test

// raceEnabled shortens the longest runs under the race detector, which
// slows them tenfold.
const raceEnabled = true
