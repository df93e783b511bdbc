// Package etcdrelocate moves one replica of a tenant etcd to another node
// without losing quorum or data: the relocation is planned as a value that can
// be printed, then executed step by step, resumable after a crash.
package etcdrelocate
