// Package extender serves gpushare's decisions to kube-scheduler as a
// scheduler extender speaking HAMi's protocol: kube-scheduler runs its own
// predicates (taints, affinity, CPU and memory, nvidia.com/gpu allocatable)
// and then asks the extender over HTTP which of the remaining nodes can take
// a GPU pod (POST /filter, k8s.io/kube-scheduler/extender/v1 ExtenderArgs
// in, ExtenderFilterResult out) and to bind it (POST /bind,
// ExtenderBindingArgs in, ExtenderBindingResult out), as it asks HAMi's
// hami-scheduler. The decisions are gpushare's, on a gpushare.Ledger the
// extender keeps current from the apiserver through informers.
//
// Two modes. ModeHAMi (the default) keeps, like HAMi's Filter, the one node
// HAMi would pick among the nodes kube-scheduler sent. ModeScores keeps
// every node the pod fits on and serves POST /prioritize with HAMi's node
// score mapped to 0–10 (binpack favours busy nodes, spread idle ones), so
// kube-scheduler's own scoring weighs in (HAMi #2264). Either way, nodes
// the pod does not fit on come back in FailedNodes with gpushare's reason
// ("CardInsufficientMemory: GPU-1a2b: 2048 MiB free < 3000 requested
// (container main: 0 of 1 GPUs fit)"), which kube-scheduler puts in the
// pod's FailedScheduling event.
//
// Filter reserves nothing. Bind fits the pod again on the node
// kube-scheduler chose, allocates it in the ledger (gpushare.Ledger.Allocate,
// atomic: under kube-scheduler's parallel binds a GPU is never booked
// twice, and a bind that lost its GPU fails cleanly and leaves nothing
// behind), writes the annotations HAMi's scheduler writes
// (hami.io/vgpu-node, hami.io/vgpu-time, hami.io/vgpu-devices-to-allocate,
// hami.io/vgpu-devices-allocated, hami.io/bind-phase=allocating,
// hami.io/bind-time, and the hami.io/vgpu-node label), so HAMi's device
// plugin and HAMi-core run unchanged on the nodes, and creates the pod's
// Binding.
//
// The server is plain HTTP on loopback (the zero Config) or TLS
// (Config.CertFile and Config.KeyFile); plain HTTP on any other address is
// refused. A request that cannot be decoded is answered 400 with the
// reason, never a panic.
package extender
