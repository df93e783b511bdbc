// Package localvolume is the node-local storage of tenantkit's simulated
// cluster, modelled on Cozystack's default StorageClass "local" (LINSTOR
// without replication: a volume lives on one node, binding waits for the
// first consumer, reclaim policy Delete).
//
// Start creates:
//
//   - the StorageClass (provisioner kubernetes.io/no-provisioner,
//     volumeBindingMode WaitForFirstConsumer, reclaimPolicy Delete, marked as
//     the default class unless Config.NotDefault);
//   - Config.PerNode static local PersistentVolumes per node, each a
//     directory under the node's folder, with required node affinity
//     kubernetes.io/hostname=<node>.
//
// The real kube-scheduler picks a node for a pod and binds its claim to a
// volume on that node (volume binding); the real persistent volume
// controller completes the binding. When a claim is deleted its volume
// becomes Released and the Manager's cleaner wipes the directory, deletes
// the volume and creates it again empty, with a new UID, like the sig-storage
// local static provisioner. So deleting a PVC really deletes the data, and a
// new claim binds on whatever node the scheduler picks. A volume whose
// reclaim policy is Retain keeps its data while Released, until its policy
// goes back to Delete.
//
// # Errors
//
// Start returns ErrInvalidConfig for a configuration that cannot work and
// the apiserver's error when an object cannot be created. The cleaner logs
// its errors and retries nothing by itself: a volume it failed to recycle
// stays Released, visible to tests.
//
// # Testing
//
// The package is exercised by the local environment's cluster tests, against
// a real kube-apiserver, kube-controller-manager and kube-scheduler.
package localvolume
