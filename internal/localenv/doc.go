// Package localenv runs a real Kubernetes control plane on loopback for
// tenantkit's tests and examples: an etcd cluster of real etcd processes and
// one or more kube-apiservers, built from pinned upstream modules (see
// package serverbin) and started with fresh certificates on free ports.
//
// It is envtest with more real parts: the etcd cluster has several members
// that a test can kill, restart, add and remove; several apiservers can run
// side by side (one per simulated tenant cluster), each with its own etcd key
// prefix; and any flag can be passed to an apiserver.
//
//	env, err := localenv.Start(ctx, localenv.Config{})
//	if err != nil { ... }
//	defer env.Stop()
//	cs := kubernetes.NewForConfigOrDie(env.RESTConfig())
//
// In tests, StartT starts the environment, skips under -short and stops it in
// t.Cleanup:
//
//	env := localenv.StartT(t, localenv.Config{})
//
// # What is real
//
// etcd and kube-apiserver are the upstream servers, unmodified, talking TLS
// with client-certificate authentication. The admin identity is a client
// certificate in system:masters. Authorization is RBAC. Without controllers
// (the default), the ServiceAccount admission plugin is off, as in envtest,
// because no controller creates the default service accounts.
//
// # Providers
//
// With TENANTKIT_CLUSTER=kind (or Config.Provider "kind"), Start creates a
// kind cluster instead and hands back its rest.Config; the etcd handle and
// extra apiservers are then unavailable. Where Docker cannot run kind, Start
// returns ErrKindUnavailable and StartT skips the test with that reason.
//
// # Shutdown
//
// Stop stops every process the environment started, newest first (SIGTERM,
// then SIGKILL after a grace period), and removes the environment's
// directory. Processes are also started with a parent-death signal, so a
// crashed test binary does not leave servers behind.
package localenv
