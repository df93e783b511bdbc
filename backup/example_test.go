package backup_test

import (
	"errors"
	"fmt"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"

	"github.com/cozystack/tenantkit/backup"
)

func ExampleAddonValues() {
	creds, err := backup.ParseCredentialsSecret("bucket-velero-backups-velero-credentials", map[string][]byte{
		"bucketName": []byte("bucket-91bbb59f"),
		"endpoint":   []byte("s3.example.org"),
		"accessKey":  []byte("AKIAEXAMPLE"),
		"secretKey":  []byte("secret"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	values, err := backup.AddonValues(creds, backup.ValuesOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(values) // String hides the credentials file
	// Output:
	// velero:
	//   configuration:
	//     backupStorageLocation:
	//     - bucket: bucket-91bbb59f
	//       config:
	//         region: us-east-1
	//         s3ForcePathStyle: "true"
	//         s3Url: https://s3.example.org
	//       default: true
	//       name: default
	//       provider: aws
	//     volumeSnapshotLocation:
	//     - config:
	//         region: us-east-1
	//       name: default
	//       provider: aws
	//   credentials:
	//     secretContents:
	//       cloud: <redacted>
	//     useSecret: true
}

func ExampleParseCredentialsSecret_malformed() {
	_, err := backup.ParseCredentialsSecret("bucket-b-velero-credentials", map[string][]byte{
		"bucketName": []byte("bucket-1"), "endpoint": []byte("s3.example.org/path"),
		"accessKey": []byte("AK"), "secretKey": []byte("SK"),
	})
	var se *backup.SecretError
	if errors.As(err, &se) {
		fmt.Println("bad key:", se.Key)
	}
	fmt.Println(err)
	// Output:
	// bad key: endpoint
	// backup: secret bucket-b-velero-credentials: key endpoint: not a bare host (want host or host:port)
}

func ExamplePlanRetention() {
	day := func(d int) time.Time { return time.Date(2026, 3, d, 2, 0, 0, 0, time.UTC) }
	var backups []velerov1.Backup
	for d := 1; d <= 5; d++ {
		backups = append(backups, fakeBackup(fmt.Sprintf("nightly-%02d", d), day(d), velerov1.BackupPhaseCompleted))
	}
	backups = append(backups, fakeBackup("nightly-06", day(6), velerov1.BackupPhaseInProgress))
	plan, err := backup.PlanRetention(backups, backup.Policy{KeepLast: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(plan)
	// Output:
	// ACTION  BACKUP      TIME                  PHASE       WHY
	// keep    nightly-06  2026-03-06T02:00:00Z  InProgress  in flight (InProgress)
	// keep    nightly-05  2026-03-05T02:00:00Z  Completed   last 1 (newest)
	// keep    nightly-04  2026-03-04T02:00:00Z  Completed   last 2 (newest)
	// delete  nightly-03  2026-03-03T02:00:00Z  Completed   not kept by any rule
	// delete  nightly-02  2026-03-02T02:00:00Z  Completed   not kept by any rule
	// delete  nightly-01  2026-03-01T02:00:00Z  Completed   not kept by any rule
}

func ExampleBackupTerminal() {
	for _, p := range []velerov1.BackupPhase{velerov1.BackupPhaseQueued, velerov1.BackupPhaseFinalizing, velerov1.BackupPhaseFailedValidation} {
		fmt.Println(p, backup.BackupTerminal(p))
	}
	// Output:
	// Queued false
	// Finalizing false
	// FailedValidation true
}
