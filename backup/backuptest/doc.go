// Package backuptest helps test code that reads Velero backups from S3: it
// generates backups in Velero's exact bucket layout (any size, for
// benchmarks too) and puts a fault-injecting proxy in front of an S3
// server (5xx answers, connection resets, truncated bodies, slow
// responses).
//
// Helpers take a testing.TB first, call t.Helper and fail the test instead
// of returning errors.
package backuptest
