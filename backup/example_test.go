package backup_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing/fstest"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/backup/backuptest"
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

// VerifyFS checks a backup folder copied out of the bucket. Here one
// ConfigMap's body is not JSON: Verify names the item and what failed.
func ExampleVerifyFS() {
	spec := backuptest.Spec{Name: "nightly", ConfigMaps: 3}
	a, _ := spec.NewArchive()
	for i, e := range a.Entries {
		if strings.HasSuffix(e.Header.Name, "/ns-0/cm-1.json") {
			a.Entries[i].Body = []byte("{this is not json}")
		}
	}
	targz, _ := a.TarGz()
	list, _ := a.ListGz()
	fsys := fstest.MapFS{
		"nightly.tar.gz":                {Data: targz},
		"nightly-resource-list.json.gz": {Data: list},
		"nightly-logs.gz":               {Data: backuptest.GzipBytes([]byte("level=info msg=done\n"))},
		"nightly-results.gz":            {Data: backuptest.GzipBytes([]byte(`{"errors":{},"warnings":{}}`))},
		"velero-backup.json":            {Data: spec.BackupJSON()},
	}
	rep, err := backup.VerifyFS(context.Background(), fsys, "nightly", backup.VerifyOptions{})
	fmt.Println(errors.Is(err, backup.ErrCorrupt))
	for _, p := range rep.Problems {
		fmt.Println(strings.TrimSpace(string(p.Kind) + " " + p.Item)) // a problem of the whole backup names no item
	}
	// Output:
	// true
	// item resources/configmaps/namespaces/ns-0/cm-1.json
	// item resources/configmaps/v1-preferredversion/namespaces/ns-0/cm-1.json
	// progress
	// missing v1/ConfigMap ns-0/cm-1
}
