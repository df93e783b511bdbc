package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/cozystack"
	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// runRemote renders the OIDC artefacts of a real tenant cluster from its
// Kubernetes application and its tenant's platform values.
func (o *options) runRemote(ctx context.Context) error {
	if err := o.target.Open(ctx, nil); err != nil {
		return err
	}
	defer o.target.Close()
	c := ref.Cluster{Namespace: o.namespace, Name: o.cluster}
	cl, err := cozystack.NewCluster(o.target.RESTConfig, c, cozystack.Config{Logger: o.target.Logger()})
	if err != nil {
		return cli.WithCode(cli.ExitUsage, err)
	}

	step := cli.Step(os.Stderr, "reading "+c.String()+" and its tenant's platform values")
	k, err := cl.Kubernetes(ctx)
	var spec oidc.AuthenticationSpec
	if err == nil {
		spec, err = cl.AuthenticationSpec(ctx)
	}
	step.Done(err)
	if err != nil {
		return remoteErr(err)
	}
	auth, err := oidc.RenderAuthentication(spec)
	if err != nil {
		return err
	}
	if auth.Mode == tenant.OIDCNone {
		fmt.Fprintf(o.out, "\n%s has OIDC off (spec.oidc.mode None): nothing to render.\n", c)
		return nil
	}
	var rows [][]string
	add := func(what, name, file string, data []byte) error {
		path, err := o.writeFile(file, data)
		rows = append(rows, []string{what, name, path})
		return err
	}
	if auth.Secret != nil {
		if err := o.writeObject(add, "AuthenticationConfiguration", auth.Secret.Namespace+"/"+auth.Secret.Name, "authn-config-secret.yaml", auth.Secret); err != nil {
			return err
		}
	}
	if auth.Mode == tenant.OIDCSystem {
		data, err := oidc.KeycloakYAML(c)
		if err != nil {
			return err
		}
		if err := add("KeycloakClientScope, KeycloakClient", c.AudienceScope()+", "+c.ClientID(), "keycloak.yaml", data); err != nil {
			return err
		}
	}
	bindings, err := oidc.Bindings(c, k.Spec.OIDC.Users)
	if err != nil {
		return err
	}
	if err := o.writeObject(add, "ClusterRoleBindings", fmt.Sprintf("%d users", len(bindings)), "bindings.yaml", bindings); err != nil {
		return err
	}
	if err := o.renderKubeconfig(ctx, cl, add); err != nil {
		return err
	}
	fmt.Fprintf(o.out, "\n%s: mode %s, audience %s, config API %s\napiserver flag %s, volume %s from Secret %s\n\n",
		c, auth.Mode, c.ClientID(), auth.APIVersion, auth.APIServerArgs[0], auth.Volume.Name, auth.Volume.Secret.SecretName)
	cli.Table(o.out, []string{"ARTEFACT", "NAME", "FILE"}, rows)
	return o.planRBAC(ctx, cl, c, k.Spec.OIDC.Users)
}

func (o *options) writeObject(add func(what, name, file string, data []byte) error, what, name, file string, obj any) error {
	data, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	return add(what, name, file, data)
}

// renderKubeconfig waits (bounded) for the tenant's admin kubeconfig, whose
// CA the OIDC kubeconfig carries.
func (o *options) renderKubeconfig(ctx context.Context, cl *cozystack.Cluster, add func(what, name, file string, data []byte) error) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	step := cli.Step(os.Stderr, "reading the tenant CA from the admin kubeconfig")
	spec, err := cl.OIDCKubeconfigSpec(ctx)
	step.Done(err)
	if err != nil {
		return remoteErr(err)
	}
	spec.Plugin = oidc.Plugin(o.plugin)
	kc, err := oidc.RenderKubeconfig(spec)
	if err != nil {
		return err
	}
	return add("OIDC kubeconfig", spec.Cluster.OIDCKubeconfigSecret(), "oidc.kubeconfig", kc.YAML)
}

// planRBAC compares the users' bindings with the tenant cluster's, when it
// answers, and applies them with --apply-rbac.
func (o *options) planRBAC(ctx context.Context, cl *cozystack.Cluster, c ref.Cluster, users []tenant.OIDCUser) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	step := cli.Step(os.Stderr, "comparing the users' ClusterRoleBindings with the tenant cluster's")
	plan, err := func() (*oidc.RBACPlan, error) {
		cs, err := cl.Clientset(ctx)
		if err != nil {
			return nil, err
		}
		r, err := oidc.NewRBAC(c, oidc.RBACConfig{Clientset: cs})
		if err != nil {
			return nil, err
		}
		plan, err := r.Plan(ctx, users)
		if err == nil && o.applyRBAC {
			err = r.Execute(ctx, plan)
		}
		return plan, err
	}()
	step.Done(err)
	if err != nil {
		fmt.Fprintf(o.out, "\ntenant cluster not compared: %v\n", err)
		if o.applyRBAC {
			return cli.WithCode(cli.ExitUnavailable, err)
		}
		return nil
	}
	verb := "plan (dry run; --apply-rbac applies it)"
	if o.applyRBAC {
		verb = "applied"
	}
	fmt.Fprintf(o.out, "\nRBAC %s:\n%s\n", verb, strings.TrimRight(plan.String(), "\n"))
	return nil
}

// remoteErr maps management-cluster errors to exit codes.
func remoteErr(err error) error {
	if errors.Is(err, cozystack.ErrNotFound) || errors.Is(err, context.DeadlineExceeded) {
		return cli.WithCode(cli.ExitFailure, err)
	}
	return cli.WithCode(cli.ExitUnavailable, err)
}

// unverifiedClaims decodes a token's payload for display. Never trust it:
// only a Verifier's answer counts.
func unverifiedClaims(token string) map[string]any {
	parts := strings.Split(token, ".")
	out := map[string]any{}
	if len(parts) != 3 {
		return out
	}
	data, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err == nil {
		_ = json.Unmarshal(data, &out)
	}
	return out
}
