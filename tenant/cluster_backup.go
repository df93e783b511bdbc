package tenant

import (
	"context"
	"fmt"

	"github.com/cozystack/tenantkit/backup"
)

// BucketCredentials reads the S3 credentials of user on the Bucket bucket
// of the cluster's tenant namespace, from the Secrets Cozystack derives for
// it (see backup.LoadCredentials).
func (cl *Cluster) BucketCredentials(ctx context.Context, bucket, user string) (backup.Credentials, error) {
	return backup.LoadCredentials(ctx, cl.c.core, cl.ref.Namespace, bucket, user)
}

// VeleroValues returns the Velero addon values for the Bucket bucket of the
// cluster's tenant, accessed as user (see backup.AddonValues).
func (cl *Cluster) VeleroValues(ctx context.Context, bucket, user string, opts backup.ValuesOptions) (backup.Values, error) {
	creds, err := cl.BucketCredentials(ctx, bucket, user)
	if err != nil {
		return backup.Values{}, err
	}
	return backup.AddonValues(creds, opts)
}

// EnableVelero turns on the cluster's Velero addon, backed by the Bucket
// bucket of its tenant accessed as user, and applies the application. It
// replaces addons.velero.valuesOverride and keeps the rest of the spec.
func (cl *Cluster) EnableVelero(ctx context.Context, bucket, user string, opts backup.ValuesOptions) (*Kubernetes, error) {
	values, err := cl.VeleroValues(ctx, bucket, user, opts)
	if err != nil {
		return nil, err
	}
	k, err := cl.Kubernetes(ctx)
	if err != nil {
		return nil, err
	}
	if err := k.Spec.Addons.EnableVelero(values); err != nil {
		return nil, err
	}
	return cl.c.ApplyKubernetes(ctx, k)
}

// VeleroClient waits for the admin kubeconfig and returns a client for the
// Velero addon inside the tenant cluster (namespace cozy-velero unless cfg
// says otherwise).
func (cl *Cluster) VeleroClient(ctx context.Context, cfg backup.Config) (*backup.Client, error) {
	rc, err := cl.RESTConfig(ctx, "")
	if err != nil {
		return nil, err
	}
	return backup.New(rc, cfg)
}

// EnableVelero switches the Velero addon on with values as its
// valuesOverride (nested under the "velero" key, as the addon chart needs).
func (a *Addons) EnableVelero(values backup.Values) error {
	m, err := toMap(values)
	if err != nil {
		return fmt.Errorf("velero values: %w", err)
	}
	a.Velero = Addon{Enabled: true, ValuesOverride: m}
	return nil
}
