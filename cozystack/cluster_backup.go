package cozystack

import (
	"context"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/tenant"
)

// BucketCredentials reads the S3 credentials of user on the Bucket bucket
// of the cluster's tenant namespace, from the Secrets Cozystack derives for
// it (see backup.LoadCredentials).
func (cl *Cluster) BucketCredentials(ctx context.Context, bucket, user string) (backup.Credentials, error) {
	return backup.LoadCredentials(ctx, cl.c.core, backup.BucketRef{Namespace: cl.ref.Namespace, Bucket: bucket, User: user})
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
// replaces addons.velero.valuesOverride with the values package backup
// derives (backup.Values.Override) and keeps the rest of the spec.
func (cl *Cluster) EnableVelero(ctx context.Context, bucket, user string, opts backup.ValuesOptions) (*tenant.Kubernetes, error) {
	values, err := cl.VeleroValues(ctx, bucket, user, opts)
	if err != nil {
		return nil, err
	}
	override, err := values.Override()
	if err != nil {
		return nil, err
	}
	k, err := cl.Kubernetes(ctx)
	if err != nil {
		return nil, err
	}
	k.Spec.Addons.Velero = tenant.Addon{Enabled: true, ValuesOverride: override}
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
	return backup.NewForConfig(rc, cfg)
}
