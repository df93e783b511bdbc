// Package nodeagent plays the kubelet for the simulated nodes of
// tenantkit's local environment, so that the real kube-controller-manager
// and kube-scheduler see nodes that behave like nodes for the objects
// tenantkit touches, and etcd "pods" are real etcd processes.
//
// For every configured node the Agent
//
//   - registers a Node (labels kubernetes.io/hostname, os, arch, gpu=on on
//     request; capacity; InternalIP; pod CIDR) and reports it Ready;
//   - renews its Lease in kube-node-lease every HeartbeatInterval, which
//     the node lifecycle controller watches;
//   - runs every pod the scheduler binds to it: it gives the pod its own
//     loopback address (see package loopnet), reports the pod's status, and
//     deletes terminating pods once their containers have stopped.
//
// Containers whose image is etcd (quay.io/coreos/etcd, registry.k8s.io/etcd,
// ...) run as real etcd processes (the binary of Config.EtcdBinary) with the
// container's command line and environment: $(VAR) references are
// expanded, envFrom ConfigMaps and Secrets and downward API fields are
// resolved, Secret and ConfigMap volumes are written to files, a claim's
// volume is its local PersistentVolume's directory, and container paths
// ("/var/run/etcd/default.etcd") are mapped onto those directories.
// Listening on 0.0.0.0 or localhost means listening on the pod's address.
// The processes resolve names through the cluster DNS (Config.DNSServer).
// Startup, readiness and liveness probes (HTTP, TCP) run against the pod
// address; their results give the container's Started and Ready, and failed
// startup or liveness probes restart it. A crashed process is restarted per
// the pod's restart policy with exponential backoff, and its exit code (137
// after SIGKILL) shows in lastState.
//
// Containers of any other image run nothing: they are reported Running and
// Ready at once, and the pod carries the condition ConditionSimulated whose
// message says so.
//
// Node operations model what tests need: Cordon and Uncordon (spec.
// unschedulable), Down (power loss: processes killed, heartbeats and status
// reports stop, so the controller manager marks the node and its pods not
// ready) and Up (the node reports Ready again and restarts its containers).
// KillContainer crashes one container.
//
// # What is simulated
//
// There is no container runtime, image, cgroup, network namespace or
// kube-proxy. Every process runs as the current user on this machine and
// reaches others through loopback addresses; connections come from
// 127.0.0.1, not from the peer pod's address. Exec probes, init containers,
// service account tokens, resource limits and logs through the API are not
// simulated.
//
// # Errors
//
// Start returns ErrInvalidConfig for a configuration that cannot work and
// the apiserver's errors when a node cannot be registered. Node operations
// return ErrUnknownNode for names the agent does not run; KillContainer
// returns ErrNotRunning when there is nothing to kill. Problems with a pod
// (a missing Secret, an unbound claim, a command other than etcd) are
// reported in its container status (waiting reason
// CreateContainerConfigError) and retried, as the kubelet does.
//
// # Testing
//
// The agent is exercised with a real kube-apiserver, kube-controller-manager
// and kube-scheduler by the local environment's cluster tests and by
// package etcdlayout; its pure helpers (variable expansion, path and URL
// mapping) have unit and fuzz tests.
package nodeagent
