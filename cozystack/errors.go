package cozystack

import "errors"

// Errors of reading and waiting. Validation errors come from package
// tenant (a *tenant.ValidationError), invalid names from package ref.
var (
	// ErrInvalidConfig is returned by New for a Config it cannot use: a
	// missing client or an unknown kubeconfig variant.
	ErrInvalidConfig = errors.New("cozystack: invalid config")
	// ErrMalformed is returned when an object read from the API does not
	// decode into the model.
	ErrMalformed = errors.New("cozystack: malformed object")
	// ErrNotFound is returned when a Kubernetes application, a Tenant or a
	// tenant namespace does not exist.
	ErrNotFound = errors.New("cozystack: not found")
	// ErrKubeconfigNotReady is returned by Cluster.Kubeconfig while the admin
	// kubeconfig Secret or the requested key does not exist yet.
	ErrKubeconfigNotReady = errors.New("cozystack: admin kubeconfig not ready")
	// ErrMalformedKubeconfig is returned when the admin kubeconfig Secret
	// holds something that is not a usable kubeconfig.
	ErrMalformedKubeconfig = errors.New("cozystack: malformed kubeconfig")
	// ErrNoEtcd is returned when no tenant up the hierarchy runs an etcd, so
	// the cluster has no datastore (the chart renders only the
	// <release>-awaiting-etcd ConfigMap).
	ErrNoEtcd = errors.New("cozystack: no etcd in the tenant or its ancestors")
	// ErrNoSeaweedFS is returned when no tenant up the hierarchy runs
	// SeaweedFS, so Buckets cannot be created.
	ErrNoSeaweedFS = errors.New("cozystack: no SeaweedFS in the tenant or its ancestors")
)
