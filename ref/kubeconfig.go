package ref

// KubeconfigVariant is a key of the admin kubeconfig Secret
// (Cluster.AdminKubeconfigSecret). The .conf variants reach the apiserver
// at its external host; the .svc variants at its Service inside the
// management cluster. super-admin is in system:masters; admin is bound to
// cluster-admin.
type KubeconfigVariant string

// The four admin kubeconfig variants Kamaji writes.
const (
	AdminConf      KubeconfigVariant = "admin.conf"
	AdminSvc       KubeconfigVariant = "admin.svc"
	SuperAdminConf KubeconfigVariant = "super-admin.conf"
	SuperAdminSvc  KubeconfigVariant = "super-admin.svc"
)

// KubeconfigVariants returns the four variants.
func KubeconfigVariants() []KubeconfigVariant {
	return []KubeconfigVariant{AdminConf, AdminSvc, SuperAdminConf, SuperAdminSvc}
}

// Valid reports whether v is one of the four variants.
func (v KubeconfigVariant) Valid() bool {
	switch v {
	case AdminConf, AdminSvc, SuperAdminConf, SuperAdminSvc:
		return true
	}
	return false
}
