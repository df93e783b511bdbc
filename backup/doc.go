// Package backup backs tenant clusters up with Velero to an S3 bucket: it
// turns Cozystack Bucket credentials into Velero settings, drives the
// Backup, Restore and Schedule lifecycle, and reads and verifies backups
// straight from S3.
package backup
