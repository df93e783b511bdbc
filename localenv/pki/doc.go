// Package pki issues the certificates of a local environment (package
// localenv): one certificate authority per environment (localenv's
// Env.CA), and server, client and peer certificates signed by it. A test
// issues its own with the environment's CA, for example a client
// certificate for another user (Env.AddUser does exactly this for the
// apiserver and returns a rest.Config):
//
//	kp, err := env.CA().Issue(pki.Spec{CommonName: "alice", Organization: []string{"team-a"}, Usage: pki.Client})
//
// A CA of its own:
//
//	ca, err := pki.NewCA("tenantkit-etcd")
//	kp, err := ca.Issue(pki.Spec{CommonName: "etcd-0", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}, Usage: pki.ServerAndClient})
//	certFile, keyFile, err := kp.WriteFiles(dir, "etcd-0")
//
// Keys are ECDSA P-256, which every server the environment runs (etcd,
// kube-apiserver, dex, versitygw) accepts and which is cheap to generate,
// so a fresh environment gets fresh keys in milliseconds. The material is
// for loopback test environments only: lifetimes are a day and keys are
// written unencrypted.
package pki
