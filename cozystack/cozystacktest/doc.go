// Package cozystacktest fakes the Cozystack platform around package
// cozystack, on any kube-apiserver (tenantkit's local environment, envtest,
// kind). A Platform installs CustomResourceDefinitions with the group,
// version and kinds of the Kubernetes and Tenant applications, which
// Cozystack serves through its aggregated API; it renders tenant namespaces
// as the tenant chart does (the namespace.cozystack.io/* labels and the
// cozystack-values Secret), and publishes a cluster's admin kubeconfig
// Secret as Kamaji does, pointing at any apiserver (for example a second
// local apiserver standing in for the tenant cluster).
//
// A test starts an apiserver, a platform, and a "tenant cluster":
//
//	env := localenv.StartT(t, localenv.Config{})
//	p := cozystacktest.NewPlatformT(t, env.RESTConfig(), cozystacktest.PlatformConfig{})
//	ns, err := p.CreateTenant(ctx, tenant.NewTenant(ref.RootNamespace, "acme", tenant.TenantSpec{}))
//	...
//	apiserver, err := env.StartAPIServer(ctx, localenv.APIServerConfig{Name: "acme-prod"})
//	err = p.PublishKubeconfig(ctx, ref.Cluster{Namespace: ns, Name: "prod"}, apiserver.RESTConfig())
//
// # Known gaps
//
// Nothing reconciles. Applying a Kubernetes application renders no
// HelmReleases, no control plane and no kubeconfig; creating a Tenant
// through the cozystack.Client (rather than Platform.CreateTenant) creates no
// namespace. The CRDs accept any spec: Cozystack's schema and chart checks
// are what tenant.KubernetesSpec.Validate mirrors. The four kubeconfig
// variants PublishKubeconfig writes are identical.
package cozystacktest
