package backup

import (
	"context"
	"fmt"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LocationSpec describes a backup storage location on a Bucket, as the
// Velero addon's chart would create it from AddonValues.
type LocationSpec struct {
	// Name is the BackupStorageLocation's name. Default DefaultLocationName.
	Name string
	// Credentials are the Bucket's credentials. Required.
	Credentials Credentials
	// Prefix is the folder inside the bucket. Default: the bucket root.
	Prefix string
	// Region is the S3 region. Default "us-east-1" (S3-compatible stores
	// ignore it; Velero's AWS plugin needs one).
	Region string
	// URL overrides the S3 URL Velero uses (default Credentials.URL()).
	URL string
	// CACertPEM is the CA Velero (and the prefix check) trust for the S3
	// endpoint, when it is private.
	CACertPEM []byte
	// ReadOnly makes the location read-only: Velero can restore and sync
	// from it but not back up to it or delete from it (the safe choice
	// for a second cluster reading another cluster's backups).
	ReadOnly bool
	// NotDefault leaves spec.default false.
	NotDefault bool
	// SyncPeriod is how often Velero syncs Backup objects from the bucket.
	// Zero keeps Velero's default (1m).
	SyncPeriod time.Duration
	// ValidationFrequency is how often Velero checks the location. Zero
	// keeps Velero's default (1m).
	ValidationFrequency time.Duration
	// SkipPrefixCheck skips listing the bucket to refuse a prefix whose
	// top level holds foreign folders.
	SkipPrefixCheck bool
}

// ApplyLocation creates or updates the credentials Secret and the
// BackupStorageLocation described by spec. Unless SkipPrefixCheck is set,
// it first lists the bucket with the credentials and refuses (a
// *PrefixError) a prefix that Velero would mark Unavailable.
func (c *Client) ApplyLocation(ctx context.Context, spec LocationSpec) (*velerov1.BackupStorageLocation, error) {
	if spec.Name == "" {
		spec.Name = DefaultLocationName
	}
	if err := ValidatePrefix(spec.Prefix); err != nil {
		return nil, err
	}
	if !spec.SkipPrefixCheck {
		objects, err := NewS3Objects(S3Config{Credentials: spec.Credentials, Region: spec.Region,
			URL: spec.URL, CACertPEM: spec.CACertPEM})
		if err != nil {
			return nil, err
		}
		store, err := NewStore(StoreConfig{Objects: objects, Prefix: spec.Prefix})
		if err != nil {
			return nil, err
		}
		if err := store.CheckPrefix(ctx); err != nil {
			return nil, fmt.Errorf("location %s: %w", spec.Name, err)
		}
	}
	secretName := "bsl-" + spec.Name + "-credentials"
	if err := c.applySecret(ctx, secretName, map[string][]byte{"cloud": []byte(credentialsFile(spec.Credentials))}); err != nil {
		return nil, err
	}
	cfg := locationConfig(spec.Credentials, spec.Region)
	if spec.URL != "" {
		cfg["s3Url"] = spec.URL
	}
	want := velerov1.BackupStorageLocationSpec{
		Provider: "aws",
		StorageType: velerov1.StorageType{ObjectStorage: &velerov1.ObjectStorageLocation{
			Bucket: spec.Credentials.Bucket, Prefix: spec.Prefix, CACert: spec.CACertPEM,
		}},
		Config:     cfg,
		Credential: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secretName}, Key: "cloud"},
		Default:    !spec.NotDefault,
		AccessMode: velerov1.BackupStorageLocationAccessModeReadWrite,
	}
	if spec.ReadOnly {
		want.AccessMode = velerov1.BackupStorageLocationAccessModeReadOnly
	}
	if spec.SyncPeriod > 0 {
		want.BackupSyncPeriod = &metav1.Duration{Duration: spec.SyncPeriod}
	}
	if spec.ValidationFrequency > 0 {
		want.ValidationFrequency = &metav1.Duration{Duration: spec.ValidationFrequency}
	}
	var cur velerov1.BackupStorageLocation
	err := c.get(ctx, "backupstoragelocations", spec.Name, &cur)
	var out velerov1.BackupStorageLocation
	switch {
	case apierrors.IsNotFound(err):
		bsl := &velerov1.BackupStorageLocation{
			TypeMeta:   metav1.TypeMeta{APIVersion: velerov1.SchemeGroupVersion.String(), Kind: "BackupStorageLocation"},
			ObjectMeta: metav1.ObjectMeta{Name: spec.Name, Namespace: c.ns},
			Spec:       want,
		}
		err = c.create(ctx, "backupstoragelocations", bsl, &out)
	case err == nil:
		cur.Spec = want
		err = c.update(ctx, "backupstoragelocations", spec.Name, &cur, &out)
	}
	if err != nil {
		return nil, fmt.Errorf("apply location %s: %w", spec.Name, err)
	}
	return &out, nil
}

func (c *Client) applySecret(ctx context.Context, name string, data map[string][]byte) error {
	secrets := c.kube.CoreV1().Secrets(c.ns)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.ns,
		Labels: map[string]string{"app.kubernetes.io/managed-by": "tenantkit"}}, Data: data}
	_, err := secrets.Create(ctx, s, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		cur, gerr := secrets.Get(ctx, name, metav1.GetOptions{})
		if gerr != nil {
			return fmt.Errorf("apply secret %s: %w", name, gerr)
		}
		cur.Data = data
		_, err = secrets.Update(ctx, cur, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("apply secret %s: %w", name, err)
	}
	return nil
}

// Locations lists the BackupStorageLocations.
func (c *Client) Locations(ctx context.Context) ([]velerov1.BackupStorageLocation, error) {
	var list velerov1.BackupStorageLocationList
	if err := c.list(ctx, "backupstoragelocations", "", &list); err != nil {
		return nil, fmt.Errorf("list locations: %w", err)
	}
	return list.Items, nil
}

// WaitLocationAvailable waits until Velero has validated location name as
// Available. It returns a *LocationError (ErrLocationUnavailable) as soon
// as Velero validates it as Unavailable, with Velero's message (bad
// credentials, a foreign prefix, a missing plugin), and, when ctx ends
// first, a *LocationError joined with ctx's error.
func (c *Client) WaitLocationAvailable(ctx context.Context, name string) (*velerov1.BackupStorageLocation, error) {
	var last velerov1.BackupStorageLocation
	err := c.poll(ctx, func() (bool, error) {
		if err := c.get(ctx, "backupstoragelocations", name, &last); err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			return false, fmt.Errorf("get location %s: %w", name, err)
		}
		switch last.Status.Phase {
		case velerov1.BackupStorageLocationPhaseAvailable:
			return true, nil
		case velerov1.BackupStorageLocationPhaseUnavailable:
			if last.Status.LastValidationTime != nil {
				return false, locationError(name, &last)
			}
		}
		return false, nil
	})
	if err == ctx.Err() && err != nil {
		return nil, fmt.Errorf("wait for location %s: %w (%w)", name, locationError(name, &last), err)
	}
	if err != nil {
		return nil, err
	}
	return &last, nil
}

func locationError(name string, b *velerov1.BackupStorageLocation) *LocationError {
	return &LocationError{Name: name, Phase: string(b.Status.Phase), Message: b.Status.Message}
}
