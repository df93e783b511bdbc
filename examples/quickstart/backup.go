package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/localenv"
)

// The tenant's Bucket for backups and its user.
const bucket, bucketUser = "velero-backups", "velero"

// backup turns on cluster A's Velero addon with the tenant's Bucket, backs
// a namespace up, verifies the backup in S3, deletes the namespace and
// restores it.
func (w *world) backup(ctx context.Context) (string, error) {
	a := w.clusters[0]
	step := w.step("starting an S3 server (versitygw) for the tenant's Bucket")
	s3, err := w.env.StartS3(ctx, localenv.S3Config{Buckets: []string{bucket}})
	step.Done(err)
	if err != nil {
		return "", err
	}
	if err := w.createBucketSecret(ctx, a.Ref().Namespace, s3); err != nil {
		return "", err
	}
	k, err := a.EnableVelero(ctx, bucket, bucketUser, backup.ValuesOptions{}) // the addon values, from the Bucket
	if err != nil {
		return "", err
	}
	fmt.Fprintf(w.out, "spec.addons.velero of %s: enabled=%v, values under %v\n", k.Ref(), k.Spec.Addons.Velero.Enabled, slices.Sorted(maps.Keys(k.Spec.Addons.Velero.ValuesOverride)))

	c, creds, err := w.startVelero(ctx, s3)
	if err != nil {
		return "", err
	}
	cs, err := a.Clientset(ctx)
	if err != nil {
		return "", err
	}
	before, err := createShop(ctx, cs)
	if err != nil {
		return "", err
	}
	rep, err := backupAndVerify(ctx, w, c, creds, s3.CAPEM)
	if err != nil {
		return "", err
	}
	if err := deleteNamespace(ctx, cs, "shop"); err != nil {
		return "", err
	}
	step = w.step("restoring shop-1")
	if _, err = c.CreateRestore(ctx, backup.RestoreOptions{Name: "shop-1-restore", BackupName: "shop-1"}); err == nil {
		_, err = c.WaitRestore(ctx, "shop-1-restore", backup.WaitOptions{})
	}
	step.Done(err)
	if err != nil {
		return "", err
	}
	after, err := readShop(ctx, cs)
	if err != nil {
		return "", err
	}
	if !maps.Equal(before, after) {
		return "", fmt.Errorf("restored namespace differs: before %v, after %v", before, after)
	}
	fmt.Fprintf(w.out, "namespace shop after the restore: %d values, identical\n", len(after))
	return fmt.Sprintf("namespace shop backed up (%d items, verified in S3), deleted, restored identical", rep.Items), nil
}

// createBucketSecret writes the Bucket's credentials Secret into the
// tenant namespace, as Cozystack derives it from a Bucket application.
func (w *world) createBucketSecret(ctx context.Context, ns string, s3 *localenv.S3Server) error {
	mgmt, err := kubernetes.NewForConfig(w.env.RESTConfig())
	if err != nil {
		return err
	}
	secret := backup.CredentialsSecret(backup.BucketRef{Namespace: ns, Bucket: bucket, User: bucketUser},
		backup.Credentials{Bucket: bucket, Endpoint: s3.Endpoint, AccessKeyID: s3.AccessKey, SecretAccessKey: s3.SecretKey})
	_, err = mgmt.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{})
	return err
}

// startVelero runs Velero for cluster A (what the addon installs) and
// creates its backup storage location from the Bucket, as the addon's chart
// does from the values.
func (w *world) startVelero(ctx context.Context, s3 *localenv.S3Server) (*backup.Client, backup.Credentials, error) {
	a := w.clusters[0]
	step := w.step("starting Velero for cluster A, with its location on the Bucket")
	c, creds, err := func() (*backup.Client, backup.Credentials, error) {
		if _, err := w.env.StartVelero(ctx, localenv.VeleroConfig{APIServer: a.api}); err != nil {
			return nil, backup.Credentials{}, err
		}
		c, err := a.VeleroClient(ctx, backup.Config{PollInterval: 250 * time.Millisecond})
		if err != nil {
			return nil, backup.Credentials{}, err
		}
		creds, err := a.BucketCredentials(ctx, bucket, bucketUser)
		if err == nil {
			_, err = c.ApplyLocation(ctx, backup.LocationSpec{Credentials: creds, CACertPEM: s3.CAPEM})
		}
		if err == nil {
			_, err = c.WaitLocationAvailable(ctx, backup.DefaultLocationName)
		}
		return c, creds, err
	}()
	step.Done(err)
	return c, creds, err
}

// backupAndVerify backs namespace shop up and verifies the backup straight
// from the bucket, without Velero.
func backupAndVerify(ctx context.Context, w *world, c *backup.Client, creds backup.Credentials, caPEM []byte) (*backup.VerifyReport, error) {
	step := w.step("backing up namespace shop as shop-1")
	_, err := c.CreateBackup(ctx, backup.BackupOptions{Name: "shop-1", IncludedNamespaces: []string{"shop"}})
	if err == nil {
		_, err = c.WaitBackup(ctx, "shop-1", backup.WaitOptions{})
	}
	step.Done(err)
	if err != nil {
		return nil, err
	}
	objects, err := backup.NewS3Objects(backup.S3Config{Credentials: creds, CACertPEM: caPEM})
	if err != nil {
		return nil, err
	}
	store, err := backup.NewStore(backup.StoreConfig{Objects: objects})
	if err != nil {
		return nil, err
	}
	rep, err := store.Verify(ctx, "shop-1", backup.VerifyOptions{})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w.out, "shop-1 in s3://%s: phase %s, %d files, %d items, %d bytes compressed: verified\n",
		bucket, rep.Phase, len(rep.Files), rep.Items, rep.ArchiveBytes)
	return rep, nil
}

// createShop creates the namespace to protect and returns its values.
func createShop(ctx context.Context, cs kubernetes.Interface) (map[string]string, error) {
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	if _, err := cs.CoreV1().ConfigMaps("shop").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"},
		Data: map[string]string{"currency": "EUR", "theme": "dark"}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	if _, err := cs.CoreV1().Secrets("shop").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "payment"},
		StringData: map[string]string{"api-key": "not-a-real-key"}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	return readShop(ctx, cs)
}

// readShop returns the namespace's ConfigMap and Secret values.
func readShop(ctx context.Context, cs kubernetes.Interface) (map[string]string, error) {
	cm, err := cs.CoreV1().ConfigMaps("shop").Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	sec, err := cs.CoreV1().Secrets("shop").Get(ctx, "payment", metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, v := range cm.Data {
		out["configmap/settings/"+k] = v
	}
	for k, v := range sec.Data {
		out["secret/payment/"+k] = string(v)
	}
	return out, nil
}

// deleteNamespace deletes the namespace and its contents. The stand-in
// tenant apiserver runs no namespace controller, so it empties and
// finalizes the namespace itself, as that controller would.
func deleteNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	del := metav1.DeleteOptions{}
	if err := cs.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, del, metav1.ListOptions{}); err != nil {
		return err
	}
	if err := cs.CoreV1().Secrets(ns).DeleteCollection(ctx, del, metav1.ListOptions{}); err != nil {
		return err
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns, del); err != nil {
		return err
	}
	obj, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	obj.Spec.Finalizers = nil
	if _, err := cs.CoreV1().Namespaces().Finalize(ctx, obj, metav1.UpdateOptions{}); err != nil {
		return err
	}
	_, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("namespace %s still has its ConfigMap after deletion (%v)", ns, err)
	}
	return nil
}
