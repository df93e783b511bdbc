// Package etcdrelocatetest helps test code that relocates etcd members:
// NewState builds an observed etcdrelocate.State by hand for planner and
// preflight tests; StartLoad runs a steady write load and checks afterwards
// that every acknowledged write is readable; StartMonitor samples a
// cluster's fault tolerance while it changes; RaiseAlarm raises an etcd
// alarm. Each helper that takes a testing.TB has the suffix T and
// fails the test (and stops what it started when the test ends); the plain
// one returns an error, for programs.
package etcdrelocatetest
