// Package backuptest helps test code that reads Velero backups: MemObjects
// is a backup.ObjectStore in memory; Spec generates backups in Velero's
// exact bucket layout (any size, for benchmarks too; Spec.Files in memory,
// Bucket.PutBackup streamed to S3); Archive crafts damaged archives; and
// the fault proxy sits in front of an S3 server (5xx answers, connection
// resets, truncated bodies, slow responses).
//
// Helpers come in two forms: a method returning an error (PutBackup,
// PutObject, Object, Keys, NewFaultProxy), and, where a test wants it, a form taking a
// testing.TB first (PutBackupT, PutObjectT, ObjectT,
// KeysT, NewFaultProxyT) that calls
// t.Helper and fails the test instead. MemObjects's methods never fail.
package backuptest
