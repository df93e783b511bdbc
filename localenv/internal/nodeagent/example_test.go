package nodeagent_test

import (
	"fmt"

	"github.com/cozystack/tenantkit/localenv/internal/nodeagent"
)

// The agent expands a container's arguments as the kubelet does before it
// starts the process.
func ExampleExpand() {
	env := map[string]string{"POD_NAME": "etcd-0", "POD_NAMESPACE": "tenant-demo"}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	fmt.Println(nodeagent.Expand("--initial-advertise-peer-urls=https://$(POD_NAME).etcd-headless.$(POD_NAMESPACE).svc:2380", lookup))
	fmt.Println(nodeagent.Expand("$$(POD_NAME) $(UNSET)", lookup))
	// Output:
	// --initial-advertise-peer-urls=https://etcd-0.etcd-headless.tenant-demo.svc:2380
	// $(POD_NAME) $(UNSET)
}
