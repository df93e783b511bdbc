package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/cozystack"
	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// stepTimeout bounds each read-only check on a real cluster.
const stepTimeout = 2 * time.Minute

// remote is the read-only tour of one real tenant cluster.
type remote struct {
	cl   *cozystack.Cluster
	out  io.Writer
	dial etcdrelocate.DialFunc
	k    *tenant.Kubernetes // read by the tenant step
}

// runRemote checks a real tenant cluster, read-only.
func (o *options) runRemote(ctx context.Context) error {
	o.target.Out = o.progress
	if err := o.target.Open(ctx, nil); err != nil {
		return err
	}
	defer o.target.Close()
	c := ref.Cluster{Namespace: o.namespace, Name: o.cluster}
	cl, err := cozystack.NewCluster(o.target.RESTConfig, c, cozystack.Config{Logger: o.target.Logger()})
	if err != nil {
		return cli.WithCode(cli.ExitUsage, err)
	}
	r := &remote{cl: cl, out: o.out, dial: o.etcdDial}
	if r.dial == nil {
		if r.dial, err = etcdrelocate.PortForwardDialer(o.target.RESTConfig); err != nil {
			return cli.WithCode(cli.ExitUnavailable, err)
		}
	}
	bounded := func(f func(context.Context) (string, error)) func(context.Context) (string, error) {
		return func(ctx context.Context) (string, error) {
			ctx, cancel := context.WithTimeout(ctx, stepTimeout)
			defer cancel()
			return f(ctx)
		}
	}
	_, err = play(ctx, o.out, []step{
		{capability: "tenant", title: "the Kubernetes application, checked against its platform", run: bounded(r.tenant), required: true},
		{capability: "oidc", title: "the OIDC artefacts, rendered (nothing applied)", run: bounded(r.oidc)},
		{capability: "gpu", title: "the GPU ledger of the tenant cluster", run: bounded(r.gpu)},
		{capability: "backup", title: "the Velero backups of the tenant cluster", run: bounded(r.backup)},
		{capability: "etcd", title: "the members of the tenant etcd (nothing moved)", run: bounded(r.etcd)},
	})
	return err
}

// tenant reads the application and checks it against its tenant's
// platform, as the chart would before rendering.
func (r *remote) tenant(ctx context.Context) (string, error) {
	k, err := r.cl.Kubernetes(ctx)
	if err != nil {
		return "", err
	}
	p, s, err := r.cl.Values(ctx)
	if err != nil {
		return "", err
	}
	r.k = k
	c := k.Ref()
	var addons []string
	for _, a := range tenant.AddonKeys() {
		if k.Spec.Addons.Enabled(a) {
			addons = append(addons, string(a))
		}
	}
	cli.Table(r.out, []string{"FIELD", "VALUE"}, [][]string{
		{"release", c.Release()},
		{"host", k.Host(s.Host)},
		{"version", string(k.Spec.WithDefaults().Version)},
		{"admin kubeconfig", c.AdminKubeconfigSecret()},
		{"etcd (datastore)", orNone(s.Etcd)},
		{"addons on", strings.Join(addons, ", ")},
		{"ready", fmt.Sprint(k.Status.Ready())},
		{"fields tenantkit does not know", orNone(strings.Join(k.UnknownFields(), ", "))},
	})
	if _, err := k.Check(p); err != nil {
		return "", fmt.Errorf("the chart would refuse it: %w", err)
	}
	return fmt.Sprintf("%s read; the chart's checks pass on its platform", c), nil
}

// oidc renders what the chart renders for the cluster's OIDC mode, and the
// users' kubeconfig.
func (r *remote) oidc(ctx context.Context) (string, error) {
	if !r.k.Spec.OIDC.On() {
		return "", skip("OIDC is off (spec.oidc.mode None)")
	}
	spec, err := r.cl.AuthenticationSpec(ctx)
	if err != nil {
		return "", err
	}
	auth, err := oidc.RenderAuthentication(spec)
	if err != nil {
		return "", err
	}
	c := r.k.Ref()
	rows := [][]string{{"apiserver flag", strings.Join(auth.APIServerArgs, " ")}}
	if auth.Config != nil {
		iss := auth.Config.JWT[0].Issuer
		rows = append(rows, []string{"issuer", iss.URL}, []string{"audiences", strings.Join(iss.Audiences, ", ")})
	}
	if auth.Secret != nil {
		rows = append(rows, []string{"AuthenticationConfiguration Secret", auth.Secret.Name + " (" + auth.APIVersion + ")"})
	}
	if auth.Mode == tenant.OIDCSystem {
		rows = append(rows, []string{"Keycloak client and scope", c.ClientID() + ", " + c.AudienceScope()})
	}
	ks, err := r.cl.OIDCKubeconfigSpec(ctx) // needs the admin kubeconfig, for the tenant CA
	if err != nil {
		return "", err
	}
	if _, err := oidc.RenderKubeconfig(ks); err != nil {
		return "", err
	}
	clientID := ks.ClientID
	if clientID == "" {
		clientID = c.ClientID()
	}
	rows = append(rows, []string{"user kubeconfig", fmt.Sprintf("server %s, issuer %s, client %s, tenant CA %d bytes",
		ks.Server, ks.IssuerURL, clientID, len(ks.CertificateAuthority))})
	cli.Table(r.out, []string{"ARTEFACT", "VALUE"}, rows)
	return fmt.Sprintf("mode %s, audience %s: authentication config, kubeconfig rendered", auth.Mode, c.ClientID()), nil
}

// gpu prints the tenant cluster's GPU ledger, with the cluster's HAMi
// settings.
func (r *remote) gpu(ctx context.Context) (string, error) {
	if !r.k.Spec.Addons.HAMi.Enabled {
		return "", skip("HAMi is off (spec.addons.hami)")
	}
	l, err := r.cl.GPULedger(ctx, gpushare.Config{})
	if err != nil {
		return "", err
	}
	printLedger(r.out, l)
	s := l.Summary()
	return fmt.Sprintf("%d GPU nodes, %d GPUs, %d pods; %s; %d objects unreadable", s.Nodes, s.GPUs, s.Pods, s, len(l.Problems())), nil
}

// printLedger prints the ledger per GPU: what each card has, holds and
// who holds it.
func printLedger(out io.Writer, l *gpushare.Ledger) {
	var rows [][]string
	for _, n := range l.Nodes() {
		for _, g := range n.GPUs {
			var pods []string
			for _, p := range g.Pods {
				pods = append(pods, p.Namespace+"/"+p.Name)
			}
			rows = append(rows, []string{n.Name, g.ID, g.Type,
				fmt.Sprintf("%d/%d MiB", g.Used.MemoryMiB, g.Capacity.MemoryMiB),
				fmt.Sprintf("%d/%d", g.Used.Cores, g.Capacity.Cores),
				fmt.Sprintf("%d/%d", g.Used.Slots, g.Capacity.Slots), strings.Join(pods, ", ")})
		}
	}
	cli.Table(out, []string{"NODE", "GPU", "TYPE", "MEMORY", "CORES", "SLOTS", "PODS"}, rows)
}

// backup lists the tenant cluster's backup locations and backups.
func (r *remote) backup(ctx context.Context) (string, error) {
	if !r.k.Spec.Addons.Velero.Enabled {
		return "", skip("Velero is off (spec.addons.velero)")
	}
	c, err := r.cl.VeleroClient(ctx, backup.Config{})
	if err != nil {
		return "", err
	}
	locs, err := c.Locations(ctx)
	if err != nil {
		return "", err
	}
	backups, err := c.Backups(ctx, "")
	if err != nil {
		return "", err
	}
	var rows [][]string
	for _, l := range locs {
		rows = append(rows, []string{"location", l.Name, string(l.Status.Phase), l.Spec.ObjectStorage.Bucket})
	}
	for _, b := range backups {
		rows = append(rows, []string{"backup", b.Name, string(b.Status.Phase), b.Status.StartTimestamp.String()})
	}
	cli.Table(r.out, []string{"KIND", "NAME", "PHASE", "BUCKET / STARTED"}, rows)
	return fmt.Sprintf("%d locations, %d backups", len(locs), len(backups)), nil
}

// etcd observes the tenant etcd that stores the cluster: members, nodes,
// health, the leader.
func (r *remote) etcd(ctx context.Context) (string, error) {
	ns, err := r.cl.EtcdNamespace(ctx)
	if err != nil {
		return "", err
	}
	rel, err := r.cl.Relocator(etcdrelocate.Config{Dial: r.dial})
	if err != nil {
		return "", err
	}
	s, err := rel.Observe(ctx, ns, etcdrelocate.DefaultCluster)
	if err != nil {
		return "", err
	}
	var rows [][]string
	unhealthy := 0
	for _, m := range s.Members {
		role := "voter"
		if m.IsLearner {
			role = "learner"
		}
		if m.ID == s.Leader() {
			role += ", leader"
		}
		health := "healthy"
		if !m.Healthy() {
			health, unhealthy = "UNHEALTHY "+m.StatusError, unhealthy+1
		}
		rows = append(rows, []string{m.Label(), etcdrelocate.FormatID(m.ID), orNone(m.Node()), role, health})
	}
	cli.Table(r.out, []string{"MEMBER", "ID", "NODE", "ROLE", "HEALTH"}, rows)
	if unhealthy > 0 {
		return "", fmt.Errorf("%d of %d members of %s/%s unhealthy", unhealthy, len(s.Members), ns, s.Cluster)
	}
	if s.Leader() == 0 {
		return "", errors.New("the members do not agree on a leader")
	}
	return fmt.Sprintf("%s/%s: %d voters, all healthy; layout %s", ns, s.Cluster, len(s.Voters()), s.Layout), nil
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
