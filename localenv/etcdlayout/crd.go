package etcdlayout

import "github.com/cozystack/tenantkit/internal/crds"

var aenixCRD = crds.Open{Group: "etcd.aenix.io", Version: "v1alpha1", Kind: "EtcdCluster",
	Plural: "etcdclusters", Singular: "etcdcluster"}

// aenixEtcdClusters is the resource of etcd.aenix.io/v1alpha1 EtcdCluster,
// the tenant etcd of Cozystack ≤ v1.5.
var aenixEtcdClusters = aenixCRD.GVR()

var (
	cozystackClusterCRD = crds.Open{Group: "etcd-operator.cozystack.io", Version: "v1alpha2", Kind: "EtcdCluster",
		Plural: "etcdclusters", Singular: "etcdcluster"}
	cozystackMemberCRD = crds.Open{Group: "etcd-operator.cozystack.io", Version: "v1alpha2", Kind: "EtcdMember",
		Plural: "etcdmembers", Singular: "etcdmember", Scale: true}
)

// etcdClusters and EtcdMembers are the resources of Cozystack ≥ v1.6's
// etcd-operator.cozystack.io/v1alpha2 EtcdCluster and EtcdMember.
var (
	etcdClusters = cozystackClusterCRD.GVR()
	EtcdMembers  = cozystackMemberCRD.GVR()
)
