package backup_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/backup/backuptest"
)

func ExampleAddonValues() {
	creds := backup.Credentials{Bucket: "bucket-91bbb59f", Endpoint: "s3.example.org", AccessKeyID: "AKIAEXAMPLE", SecretAccessKey: "secret"}
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

// CredentialsSecret writes a Bucket user's Secret as Cozystack does, for a
// tool or test that stands in for the Bucket; LoadCredentials reads it back.
func ExampleCredentialsSecret() {
	ref := backup.BucketRef{Namespace: "tenant-demo", Bucket: "backups", User: "velero"}
	secret := backup.CredentialsSecret(ref, backup.Credentials{Bucket: "bucket-1", Endpoint: "s3.example.org", AccessKeyID: "AK", SecretAccessKey: "SK"})
	kube := fake.NewClientset(secret)
	creds, err := backup.LoadCredentials(context.Background(), kube, ref)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(secret.Namespace + "/" + secret.Name)
	fmt.Println(creds)
	// Output:
	// tenant-demo/bucket-backups-velero-credentials
	// bucket bucket-1 at s3.example.org (access key AK)
}

// LoadCredentials names the Secret and key at fault, never the secret key.
func ExampleLoadCredentials_malformed() {
	kube := fake.NewClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bucket-b-velero-credentials", Namespace: "tenant-demo"},
		Data: map[string][]byte{"bucketName": []byte("bucket-1"), "endpoint": []byte("s3.example.org/path"),
			"accessKey": []byte("AK"), "secretKey": []byte("SK")},
	})
	_, err := backup.LoadCredentials(context.Background(), kube, backup.BucketRef{Namespace: "tenant-demo", Bucket: "b", User: "velero"})
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

// Verify checks a backup in any ObjectStore; here one held in memory
// whose ConfigMap body is not JSON: Verify names the item and what failed.
func ExampleStore_Verify() {
	spec := backuptest.Spec{Name: "nightly", ConfigMaps: 3}
	a, _ := spec.NewArchive()
	for i, e := range a.Entries {
		if strings.HasSuffix(e.Header.Name, "/ns-0/cm-1.json") {
			a.Entries[i].Body = []byte("{this is not json}")
		}
	}
	targz, _ := a.TarGz()
	list, _ := a.ListGz()
	objects := &backuptest.MemObjects{}
	objects.Put("backups/nightly/nightly.tar.gz", targz)
	objects.Put("backups/nightly/nightly-resource-list.json.gz", list)
	objects.Put("backups/nightly/nightly-logs.gz", backuptest.GzipBytes([]byte("level=info msg=done\n")))
	objects.Put("backups/nightly/nightly-results.gz", backuptest.GzipBytes([]byte(`{"errors":{},"warnings":{}}`)))
	objects.Put("backups/nightly/velero-backup.json", spec.BackupJSON())
	store, _ := backup.NewStore(backup.StoreConfig{Objects: objects})
	rep, err := store.Verify(context.Background(), "nightly", backup.VerifyOptions{})
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

// A bucket synced to disk (`aws s3 sync s3://<bucket> <dir>`, `rclone
// sync`) verifies like the bucket itself.
func ExampleNewDirObjects() {
	dir, _ := os.MkdirTemp("", "bucket-copy-")
	defer os.RemoveAll(dir)
	files, _ := backuptest.Spec{Name: "nightly", ConfigMaps: 3}.Files()
	_ = os.MkdirAll(filepath.Join(dir, "backups", "nightly"), 0o755)
	for name, data := range files {
		_ = os.WriteFile(filepath.Join(dir, "backups", "nightly", name), data, 0o644)
	}

	objects, err := backup.NewDirObjects(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer objects.Close()
	store, _ := backup.NewStore(backup.StoreConfig{Objects: objects})
	rep, err := store.Verify(context.Background(), "nightly", backup.VerifyOptions{})
	if err != nil {
		fmt.Println(err) // a *VerifyError (ErrCorrupt) lists the problems
		return
	}
	fmt.Println(rep.OK(), rep.Items, "items")
	// Output:
	// true 5 items
}
