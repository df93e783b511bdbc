package main

// buildPhases are the servers of the embedded story in the order it needs
// them: the control plane first (every step), dex for the tenant step,
// then the S3 server and Velero for backup, and the controllers last, for
// the simulated cluster of the etcd step. localenv.BuildAhead builds what
// the cache lacks in this order, in the background, so that on a first run
// the tenant step plays while Velero and the controllers still build.
var buildPhases = [][]string{
	{"etcd"},
	{"kube-apiserver"},
	{"dex"},
	{"versitygw"},
	{"velero", "velero-plugin-for-aws"},
	{"kube-controller-manager", "kube-scheduler"},
}
