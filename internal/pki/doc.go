// Package pki issues the certificates the local environment needs: one
// certificate authority per environment, and server, client and peer
// certificates signed by it. Keys are ECDSA P-256, which every server the
// environment runs (etcd, kube-apiserver, dex, versitygw) accepts and which is
// cheap to generate, so a fresh environment gets fresh keys in milliseconds.
//
//	ca, err := pki.NewCA("tenantkit-etcd")
//	kp, err := ca.Issue(pki.Spec{CommonName: "etcd-0", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}, Usage: pki.ServerAndClient})
//	certFile, keyFile, err := kp.WriteFiles(dir, "etcd-0")
//
// The material is for loopback test environments only: lifetimes are a day and
// keys are written unencrypted.
package pki
