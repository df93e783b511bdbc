package loopnet_test

import (
	"fmt"

	"github.com/cozystack/tenantkit/localenv/internal/loopnet"
)

// A pod gets a loopback address to listen on; the cluster sees its twin in
// 10.X.0.0/16.
func Example() {
	n, err := loopnet.Reserve()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer n.Release()
	node := n.Subnet(0)
	pod, err := node.Allocate("pod-uid")
	if err != nil {
		fmt.Println(err)
		return
	}
	podIP := n.ClusterAddr(pod)
	fmt.Println(pod.IsLoopback(), podIP.IsPrivate(), n.HostAddr(podIP) == pod)
	// Output: true true true
}
