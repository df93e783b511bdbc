package etcdrelocate

import (
	"k8s.io/client-go/rest"

	"github.com/cozystack/tenantkit/internal/portforward"
)

// PortForwardDialer returns a DialFunc that reaches members through the
// Kubernetes API's port-forward to their pods, as kubectl port-forward and
// the kubectl-etcd plugin do, for running outside the cluster network (or
// where a NetworkPolicy keeps the library's pod from etcd). Each dial of
// <pod>.<service>.<namespace>.svc:<port> opens a port-forward stream to
// that pod and port; TLS is still verified against the member's DNS name.
func PortForwardDialer(cfg *rest.Config) (DialFunc, error) {
	if cfg == nil {
		return nil, errNil("*rest.Config")
	}
	return portforward.Dialer(cfg)
}
