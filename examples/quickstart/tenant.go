package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/cozystack/cozystacktest"
	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

const demoPassword = "tenantkit-demo"

// tenants are the story's tenants, each with one admin user in the IdP.
var tenants = []struct{ name, user string }{
	{"alpha", "alice@alpha.example"},
	{"beta", "bob@beta.example"},
}

// clusterSpec is what a tenant asks for: a GPU node group with HAMi, and
// OIDC with the platform's IdP for its admin.
func clusterSpec(admin string) tenant.KubernetesSpec {
	return tenant.KubernetesSpec{
		Version: "v1.35",
		NodeGroups: map[string]tenant.NodeGroup{
			"md0": {MaxReplicas: new(3), InstanceType: "u1.medium", Roles: []string{"ingress-nginx"}},
			"gpu": {MaxReplicas: new(2), InstanceType: "u1.xlarge", GPUs: []tenant.GPU{{Name: "nvidia.com/GA100_A100_PCIE_80GB"}}},
		},
		Addons: tenant.Addons{GPUOperator: tenant.Addon{Enabled: true}, HAMi: tenant.Addon{Enabled: true}},
		OIDC:   tenant.OIDC{Mode: tenant.OIDCSystem, Users: []tenant.OIDCUser{{Email: admin, Role: tenant.RoleAdmin}}},
	}
}

// tenants sets up the platform, applies a tenant and a Kubernetes cluster
// for each of tenants, and provisions the clusters.
func (w *world) tenants(ctx context.Context) (string, error) {
	p, err := cozystacktest.NewPlatform(ctx, w.env.RESTConfig(), cozystacktest.PlatformConfig{OIDCEnabled: true})
	if err != nil {
		return "", err
	}
	w.platform = p
	if err := w.startIdP(ctx); err != nil {
		return "", err
	}
	c := p.Client()
	for _, tn := range tenants {
		ns, err := p.CreateTenant(ctx, tenant.NewTenant(ref.RootNamespace, tn.name, tenant.TenantSpec{Etcd: true}))
		if err != nil {
			return "", err
		}
		k, err := c.ApplyKubernetes(ctx, tenant.NewKubernetes(ref.Cluster{Namespace: ns, Name: "prod"}, clusterSpec(tn.user))) // validated first
		if err != nil {
			return "", err
		}
		cl, err := c.Cluster(k.Ref())
		if err != nil {
			return "", err
		}
		w.clusters = append(w.clusters, &tenantCluster{Cluster: cl, user: tn.user})
	}
	bad := clusterSpec(tenants[0].user)
	bad.Addons.GPUOperator.Enabled = false
	_, err = c.ApplyKubernetes(ctx, tenant.NewKubernetes(ref.Cluster{Namespace: w.clusters[0].Ref().Namespace, Name: "broken"}, bad))
	if !errors.Is(err, tenant.ErrHAMiRequiresGPUOperator) {
		return "", fmt.Errorf("HAMi without the GPU Operator: want the chart's refusal, got %v", err)
	}
	fmt.Fprintf(w.out, "A cluster with HAMi but no GPU Operator is refused before it is sent, as the chart would:\n  %v\n\n", err)

	if err := w.provision(ctx); err != nil {
		return "", err
	}
	return w.showClusters(ctx)
}

// startIdP starts dex as the platform's IdP: one client per cluster, each
// tenant's admin in the tenant's admin group.
func (w *world) startIdP(ctx context.Context) error {
	cfg := localenv.DexConfig{}
	for _, tn := range tenants {
		ns, _ := ref.ChildNamespace(ref.RootNamespace, tn.name)
		cfg.Clients = append(cfg.Clients, ref.Cluster{Namespace: ns, Name: "prod"}.ClientID())
		cfg.Users = append(cfg.Users, localenv.DexUser{Email: tn.user, Password: demoPassword, Groups: []string{ns + "-admin"}})
	}
	step := w.step("starting dex as the platform's OIDC issuer")
	dex, err := w.env.StartDex(ctx, cfg)
	step.Done(err)
	w.dex = dex
	return err
}

// provision does for each cluster what Cozystack's chart and Kamaji do:
// start its apiserver with the AuthenticationConfiguration rendered from
// the application (dex as the issuer) and publish its admin kubeconfig.
func (w *world) provision(ctx context.Context) error {
	step := w.step("starting the tenant clusters' kube-apiservers with their rendered OIDC configuration")
	var wg sync.WaitGroup
	errs := make([]error, len(w.clusters))
	for i, tc := range w.clusters {
		wg.Go(func() { errs[i] = w.provisionOne(ctx, tc) })
	}
	wg.Wait()
	err := errors.Join(errs...)
	step.Done(err)
	return err
}

func (w *world) provisionOne(ctx context.Context, tc *tenantCluster) error {
	spec, err := tc.AuthenticationSpec(ctx)
	if err != nil {
		return err
	}
	spec.IssuerURL, spec.CertificateAuthority = w.dex.IssuerURL, w.dex.CAPEM
	auth, err := oidc.RenderAuthentication(spec)
	if err != nil {
		return err
	}
	path := filepath.Join(w.env.Dir(), tc.Ref().Namespace+"-"+ref.OIDCAuthnConfigKey)
	if err := os.WriteFile(path, auth.YAML, 0o600); err != nil {
		return err
	}
	tc.api, err = w.env.StartAPIServer(ctx, localenv.APIServerConfig{Name: tc.Ref().Namespace,
		ExtraArgs: []string{"--authentication-config=" + path}})
	if err != nil {
		return cli.WithCode(cli.ExitUnavailable, err)
	}
	if tc.verifier, err = oidc.NewVerifier(ctx, oidc.VerifierConfig{JWT: auth.Config.JWT[0]}); err != nil {
		return err
	}
	return w.platform.PublishKubeconfig(ctx, tc.Ref(), tc.api.RESTConfig())
}

// showClusters reads the clusters back through their handles and prints
// the names Cozystack derives for them.
func (w *world) showClusters(ctx context.Context) (string, error) {
	var rows [][]string
	for _, tc := range w.clusters {
		k, err := tc.Kubernetes(ctx)
		if err != nil {
			return "", err
		}
		etcd, err := tc.EtcdNamespace(ctx)
		if err != nil {
			return "", err
		}
		c := k.Ref()
		rows = append(rows, []string{c.String(), c.Release(), c.AdminKubeconfigSecret(),
			c.ClientID(), etcd, tc.api.URL})
	}
	cli.Table(w.out, []string{"CLUSTER", "RELEASE", "ADMIN KUBECONFIG", "OIDC AUDIENCE", "ETCD", "APISERVER"}, rows)
	return "tenants alpha and beta, a cluster each: validated, applied, read back, apiservers up", nil
}
