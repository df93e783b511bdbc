//go:build !race

package gpushare_test

const raceEnabled = false
