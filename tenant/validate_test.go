package tenant_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
	"github.com/cozystack/tenantkit/tenant/tenanttest"
)

func secretVolume(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}}
}

func TestKubernetesSpec_Check(t *testing.T) {
	oidcOn := tenant.Platform{OIDCEnabled: true}
	withAPIServer := func(mode tenant.OIDCMode, a tenant.APIServer) tenant.KubernetesSpec {
		s := tenant.KubernetesSpec{ControlPlane: tenant.ControlPlane{APIServer: a}}
		s.OIDC.Mode = mode
		if mode == tenant.OIDCCustomConfig {
			s.OIDC.CustomConfig.SecretRef.Name = "my-authn"
		}
		return s
	}
	for _, tt := range []struct {
		name      string
		spec      tenant.KubernetesSpec
		platform  tenant.Platform
		wantErr   error // nil: valid
		wantField string
	}{
		{name: "empty spec", spec: tenant.KubernetesSpec{}},
		{name: "defaulted spec", spec: tenant.KubernetesSpec{}.WithDefaults()},
		{name: "full spec", spec: tenanttest.FullSpec(), platform: oidcOn},

		// OIDC mode and sources.
		{name: "System without platform OIDC", spec: tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: tenant.OIDCSystem}},
			wantErr: tenant.ErrOIDCPlatformDisabled, wantField: "spec.oidc.mode"},
		{name: "System with platform OIDC", spec: tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: tenant.OIDCSystem}}, platform: oidcOn},
		{name: "CustomConfig with both sources",
			spec: tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: tenant.OIDCCustomConfig,
				CustomConfig: tenant.CustomConfig{Config: "apiVersion: x", SecretRef: tenant.SecretRef{Name: "s"}}}},
			wantErr: tenant.ErrOIDCCustomConfigConflict, wantField: "spec.oidc.customConfig"},
		{name: "CustomConfig with neither source", spec: tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: tenant.OIDCCustomConfig}},
			wantErr: tenant.ErrOIDCCustomConfigMissing, wantField: "spec.oidc.customConfig"},
		{name: "CustomConfig inline", spec: tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: tenant.OIDCCustomConfig,
			CustomConfig: tenant.CustomConfig{Config: "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\n"}}}},
		{name: "unknown mode", spec: tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: "Keycloak"}},
			wantErr: tenant.ErrInvalidValue, wantField: "spec.oidc.mode"},
		{name: "user with unknown role", spec: tenant.KubernetesSpec{OIDC: tenant.OIDC{Users: []tenant.OIDCUser{{Email: "a@b", Role: "owner"}}}},
			wantErr: tenant.ErrInvalidValue, wantField: "spec.oidc.users[0].role"},

		// Legacy flags.
		{name: "--oidc- flag with System", platform: oidcOn,
			spec:    withAPIServer(tenant.OIDCSystem, tenant.APIServer{ExtraArgs: []string{"--v=2", "--oidc-issuer-url=https://idp"}}),
			wantErr: tenant.ErrLegacyOIDCFlag, wantField: "spec.controlPlane.apiServer.extraArgs[1]"},
		{name: "--authentication-config flag with CustomConfig",
			spec:    withAPIServer(tenant.OIDCCustomConfig, tenant.APIServer{ExtraArgs: []string{"--authentication-config=/x.yaml"}}),
			wantErr: tenant.ErrLegacyOIDCFlag, wantField: "spec.controlPlane.apiServer.extraArgs[0]"},
		{name: "--oidc- flag with OIDC off is the user's business",
			spec: withAPIServer(tenant.OIDCNone, tenant.APIServer{ExtraArgs: []string{"--oidc-issuer-url=https://idp"}})},

		// Extra volumes.
		{name: "reserved talos-ca", spec: withAPIServer("", tenant.APIServer{ExtraVolumes: []corev1.Volume{secretVolume("talos-ca")}}),
			wantErr: tenant.ErrReservedVolume, wantField: "spec.controlPlane.apiServer.extraVolumes[0].name"},
		{name: "reserved talos-tls-cert", spec: withAPIServer("", tenant.APIServer{ExtraVolumes: []corev1.Volume{secretVolume("a"), secretVolume("talos-tls-cert")}}),
			wantErr: tenant.ErrReservedVolume, wantField: "spec.controlPlane.apiServer.extraVolumes[1].name"},
		{name: "authentication-config while OIDC is on",
			spec:    withAPIServer(tenant.OIDCCustomConfig, tenant.APIServer{ExtraVolumes: []corev1.Volume{secretVolume("authentication-config")}}),
			wantErr: tenant.ErrReservedVolume, wantField: "spec.controlPlane.apiServer.extraVolumes[0].name"},
		{name: "authentication-config while OIDC is off",
			spec: withAPIServer(tenant.OIDCNone, tenant.APIServer{ExtraVolumes: []corev1.Volume{secretVolume("authentication-config")}})},
		{name: "hostPath source", spec: withAPIServer("", tenant.APIServer{ExtraVolumes: []corev1.Volume{{Name: "h",
			VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc"}}}}}),
			wantErr: tenant.ErrVolumeSource, wantField: "spec.controlPlane.apiServer.extraVolumes[0]"},
		{name: "projected source", spec: withAPIServer("", tenant.APIServer{ExtraVolumes: []corev1.Volume{{Name: "p",
			VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}}}}),
			wantErr: tenant.ErrVolumeSource, wantField: "spec.controlPlane.apiServer.extraVolumes[0]"},
		{name: "no source", spec: withAPIServer("", tenant.APIServer{ExtraVolumes: []corev1.Volume{{Name: "n"}}}),
			wantErr: tenant.ErrVolumeSource, wantField: "spec.controlPlane.apiServer.extraVolumes[0]"},
		{name: "two sources", spec: withAPIServer("", tenant.APIServer{ExtraVolumes: []corev1.Volume{{Name: "two",
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{}, ConfigMap: &corev1.ConfigMapVolumeSource{}}}}}),
			wantErr: tenant.ErrVolumeSource, wantField: "spec.controlPlane.apiServer.extraVolumes[0]"},
		{name: "no name", spec: withAPIServer("", tenant.APIServer{ExtraVolumes: []corev1.Volume{secretVolume("")}}),
			wantErr: tenant.ErrVolumeName, wantField: "spec.controlPlane.apiServer.extraVolumes[0].name"},
		{name: "duplicate names", spec: withAPIServer("", tenant.APIServer{ExtraVolumes: []corev1.Volume{secretVolume("a"), secretVolume("a")}}),
			wantErr: tenant.ErrDuplicateVolume, wantField: "spec.controlPlane.apiServer.extraVolumes[1].name"},
		{name: "mount of undeclared volume", spec: withAPIServer("", tenant.APIServer{
			ExtraVolumes:      []corev1.Volume{secretVolume("a")},
			ExtraVolumeMounts: []corev1.VolumeMount{{Name: "a", MountPath: "/a"}, {Name: "b", MountPath: "/b"}}}),
			wantErr: tenant.ErrUndeclaredVolumeMount, wantField: "spec.controlPlane.apiServer.extraVolumeMounts[1].name"},
		{name: "mount of a chart volume", spec: withAPIServer("", tenant.APIServer{
			ExtraVolumeMounts: []corev1.VolumeMount{{Name: "talos-ca", MountPath: "/x"}}}),
			wantErr: tenant.ErrUndeclaredVolumeMount, wantField: "spec.controlPlane.apiServer.extraVolumeMounts[0].name"},

		// Addons.
		{name: "HAMi without GPU Operator", spec: tenant.KubernetesSpec{Addons: tenant.Addons{HAMi: tenant.Addon{Enabled: true}}},
			wantErr: tenant.ErrHAMiRequiresGPUOperator, wantField: "spec.addons.hami.enabled"},
		{name: "GPU Operator without HAMi", spec: tenant.KubernetesSpec{Addons: tenant.Addons{GPUOperator: tenant.Addon{Enabled: true}}}},
		{name: "ouroboros without ingress-nginx", spec: tenant.KubernetesSpec{Addons: tenant.Addons{Ouroboros: tenant.Addon{Enabled: true}}},
			wantErr: tenant.ErrOuroborosRequiresIngress, wantField: "spec.addons.ouroboros.enabled"},
		{name: "unknown expose method", spec: tenant.KubernetesSpec{Addons: tenant.Addons{IngressNginx: tenant.IngressNginxAddon{ExposeMethod: "NodePort"}}},
			wantErr: tenant.ErrInvalidValue, wantField: "spec.addons.ingressNginx.exposeMethod"},

		// Node groups.
		{name: "cpu without memory", spec: tenant.KubernetesSpec{NodeGroups: map[string]tenant.NodeGroup{
			"md0": {InstanceType: "u1.medium", Resources: tenant.Resources{CPU: new(resource.MustParse("4"))}}}},
			wantErr: tenant.ErrNodeGroupResources, wantField: "spec.nodeGroups.md0.resources"},
		{name: "memory without cpu", spec: tenant.KubernetesSpec{NodeGroups: map[string]tenant.NodeGroup{
			"md0": {InstanceType: "u1.medium", Resources: tenant.Resources{Memory: new(resource.MustParse("4Gi"))}}}},
			wantErr: tenant.ErrNodeGroupResources, wantField: "spec.nodeGroups.md0.resources"},
		{name: "podCpuLimit with instance type sizing", spec: tenant.KubernetesSpec{NodeGroups: map[string]tenant.NodeGroup{
			"md0": {InstanceType: "u1.medium", PodCPULimit: new(resource.MustParse("2"))}}},
			wantErr: tenant.ErrPodCPUInstanceType, wantField: "spec.nodeGroups.md0.podCpuLimit"},
		{name: "podCpuRequest above podCpuLimit", spec: tenant.KubernetesSpec{NodeGroups: map[string]tenant.NodeGroup{
			"md0": {InstanceType: "u1.medium", Resources: tenant.Resources{CPU: new(resource.MustParse("4")), Memory: new(resource.MustParse("8Gi"))},
				PodCPULimit: new(resource.MustParse("2")), PodCPURequest: new(resource.MustParse("2500m"))}}},
			wantErr: tenant.ErrPodCPURequestAboveLimit, wantField: "spec.nodeGroups.md0.podCpuRequest"},
		{name: "reservations fill the node", spec: tenant.KubernetesSpec{NodeGroups: map[string]tenant.NodeGroup{
			"md0": {Resources: tenant.Resources{CPU: new(resource.MustParse("2")), Memory: new(resource.MustParse("512Mi"))}}}},
			wantErr: tenant.ErrKubeletTotal, wantField: "spec.nodeGroups.md0.kubelet"},
		{name: "eviction hard above soft", spec: tenant.KubernetesSpec{NodeGroups: map[string]tenant.NodeGroup{
			"md0": {InstanceType: "u1.medium", Kubelet: tenant.Kubelet{EvictionHardMemory: "15%"}}}},
			wantErr: tenant.ErrKubeletEviction, wantField: "spec.nodeGroups.md0.kubelet.evictionHardMemory"},
		{name: "group maxUnhealthy", spec: tenant.KubernetesSpec{NodeGroups: map[string]tenant.NodeGroup{
			"md0": {InstanceType: "u1.medium", MaxUnhealthy: "most"}}},
			wantErr: tenant.ErrMaxUnhealthy, wantField: "spec.nodeGroups.md0.maxUnhealthy"},

		// Health check, autoscaler, presets.
		{name: "readyUnknownTimeout zero", spec: tenant.KubernetesSpec{NodeHealthCheck: tenant.NodeHealthCheck{ReadyUnknownTimeout: "0m"}},
			wantErr: tenant.ErrDuration, wantField: "spec.nodeHealthCheck.readyUnknownTimeout"},
		{name: "maxNodeProvisionTime in days", spec: tenant.KubernetesSpec{MaxNodeProvisionTime: "1d"},
			wantErr: tenant.ErrDuration, wantField: "spec.maxNodeProvisionTime"},
		{name: "resources preset", spec: tenant.KubernetesSpec{ControlPlane: tenant.ControlPlane{Scheduler: tenant.Component{ResourcesPreset: "huge"}}},
			wantErr: tenant.ErrInvalidValue, wantField: "spec.controlPlane.scheduler.resourcesPreset"},
		{name: "ouroboros gatewayApi without the Gateway API", spec: tenant.KubernetesSpec{Addons: tenant.Addons{Ouroboros: tenant.Addon{
			ValuesOverride: map[string]any{"ouroboros": map[string]any{"controller": map[string]any{"gatewayApi": map[string]any{"enabled": "Yes"}}}}}}},
			wantErr: tenant.ErrOuroborosGatewayAPI, wantField: "spec.addons.ouroboros.valuesOverride.ouroboros.controller.gatewayApi.enabled"},

		// Version.
		{name: "unknown version", spec: tenant.KubernetesSpec{Version: "v1.29"}, wantErr: tenant.ErrInvalidValue, wantField: "spec.version"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := checkErr(tt.spec.Check(tt.platform))
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			var ve *tenant.ValidationError
			require.ErrorAs(t, err, &ve)
			require.Len(t, ve.Errors, 1, "want exactly one problem, got %v", err)
			require.Equal(t, tt.wantField, ve.Errors[0].Field)
			require.True(t, ve.Has(tt.wantErr))
		})
	}
}

// The rules tenantkit had before it followed the chart are warnings: the
// chart accepts these values, tenantkit reports them.
func TestKubernetesSpec_Check_warnings(t *testing.T) {
	sized := func(g tenant.NodeGroup) tenant.NodeGroup {
		g.InstanceType = "u1.medium"
		return g
	}
	for _, tt := range []struct {
		name      string
		spec      tenant.KubernetesSpec
		want      error
		wantRule  string
		wantField string
	}{
		{"user listed twice", tenant.KubernetesSpec{OIDC: tenant.OIDC{Users: []tenant.OIDCUser{{Email: "a@b", Role: tenant.RoleView}, {Email: "a@b", Role: tenant.RoleAdmin}}}},
			tenant.ErrDuplicateUser, "K-oidc-email-duplicate", "spec.oidc.users[1].email"},
		{"negative minReplicas", tenant.KubernetesSpec{NodeGroups: map[string]tenant.NodeGroup{"md0": sized(tenant.NodeGroup{MinReplicas: -1})}},
			tenant.ErrMinReplicasNegative, "K-minreplicas-negative", "spec.nodeGroups.md0.minReplicas"},
		{"max below min", tenant.KubernetesSpec{NodeGroups: map[string]tenant.NodeGroup{"md0": sized(tenant.NodeGroup{MinReplicas: 3, MaxReplicas: new(2)})}},
			tenant.ErrMaxReplicasBelowMin, "K-maxreplicas-below-min", "spec.nodeGroups.md0.maxReplicas"},
		{"GPU without name", tenant.KubernetesSpec{NodeGroups: map[string]tenant.NodeGroup{"gpu": sized(tenant.NodeGroup{GPUs: []tenant.GPU{{}}})}},
			tenant.ErrEmptyName, "K-gpu-name-empty", "spec.nodeGroups.gpu.gpus[0].name"},
		{"cpu without memory and no instance type", tenant.KubernetesSpec{NodeGroups: map[string]tenant.NodeGroup{
			"md0": {Resources: tenant.Resources{CPU: new(resource.MustParse("4"))}}}},
			tenant.ErrNodeGroupResources, "K-resources-pair", "spec.nodeGroups.md0.resources"},
		{"no instance type, no resources", tenant.KubernetesSpec{NodeGroups: map[string]tenant.NodeGroup{"md0": {MaxReplicas: new(3)}}},
			tenant.ErrNodeGroupUnsized, "K-nodegroup-unsized", "spec.nodeGroups.md0.instanceType"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, err := tt.spec.Check(tenant.Platform{})
			require.NoError(t, err, "the chart accepts it")
			require.Len(t, w, 1, "%s", w)
			require.ErrorIs(t, w[0], tt.want)
			require.Equal(t, tt.wantRule, w[0].Rule)
			require.Equal(t, tt.wantField, w[0].Field)
			require.True(t, w.Has(tt.want))
		})
	}
	w, err := tenanttest.FullSpec().Check(tenant.Platform{OIDCEnabled: true, Release: tenant.Release20260819})
	require.NoError(t, err)
	require.Empty(t, w, "the full fixture warns of nothing before FluxCD's removal")
	w, err = tenanttest.FullSpec().Check(tenant.Platform{OIDCEnabled: true})
	require.NoError(t, err)
	require.Equal(t, []string{"K-unknown-field"}, w.Rules(), "the latest release has no addons.fluxcd")
	require.Equal(t, "spec.addons.fluxcd", w[0].Field)
}

// Where tenantkit is stricter than the chart on purpose, Check refuses
// with a K- rule (DecidedByTenantkit); ValidationError.By without it is
// the chart's verdict, which accepts.
func TestKubernetesSpec_Check_tenantkitRefusals(t *testing.T) {
	for _, tt := range []struct {
		name      string
		spec      tenant.KubernetesSpec
		want      error
		wantRule  string
		wantField string
	}{
		{"user without email", tenant.KubernetesSpec{OIDC: tenant.OIDC{Users: []tenant.OIDCUser{{Role: tenant.RoleView}}}},
			tenant.ErrEmptyName, "K-oidc-email-empty", "spec.oidc.users[0].email"},
		{"inline config that is not one", tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: tenant.OIDCCustomConfig,
			CustomConfig: tenant.CustomConfig{Config: "..."}}}, tenant.ErrCustomConfigUnreadable, "K-customconfig-parse", "spec.oidc.customConfig.config"},
		{"inline broken YAML", tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: tenant.OIDCCustomConfig,
			CustomConfig: tenant.CustomConfig{Config: "kind: [AuthenticationConfiguration"}}}, tenant.ErrCustomConfigUnreadable, "K-customconfig-parse", "spec.oidc.customConfig.config"},
		{"inline v1 config on v1.31", tenant.KubernetesSpec{Version: "v1.31", OIDC: tenant.OIDC{Mode: tenant.OIDCCustomConfig,
			CustomConfig: tenant.CustomConfig{Config: "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n"}}},
			tenant.ErrCustomConfigVersion, "K-authn-version", "spec.oidc.customConfig.config"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.spec.Check(tenant.Platform{})
			require.ErrorIs(t, err, tt.want)
			var ve *tenant.ValidationError
			require.ErrorAs(t, err, &ve)
			require.Len(t, ve.Errors, 1)
			require.Equal(t, tt.wantRule, ve.Errors[0].Rule)
			require.Equal(t, tt.wantField, ve.Errors[0].Field)
			require.Equal(t, tenant.DecidedByTenantkit, ve.Errors[0].Decider())
			require.NoError(t, ve.By(tenant.DecidedByChart, tenant.DecidedByHelm), "the chart renders it")
			require.Error(t, ve.By(tenant.DecidedByTenantkit))
			require.Contains(t, err.Error(), "apiserver")
		})
	}
}

// cozystack-api's refusals are its own verdict, apart from the chart's.
func TestKubernetes_Check_apiVerdict(t *testing.T) {
	k := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "1prod"}, tenant.KubernetesSpec{})
	_, err := k.Check(tenant.Platform{})
	var ve *tenant.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, []string{"A-name-dns1035"}, ve.Rules())
	require.NoError(t, ve.By(tenant.DecidedByChart, tenant.DecidedByHelm), "Helm takes kubernetes-1prod")
	require.Error(t, ve.By(tenant.DecidedByAPI))

	k = tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "Prod"}, tenant.KubernetesSpec{})
	_, err = k.Check(tenant.Platform{})
	require.ErrorAs(t, err, &ve)
	require.Equal(t, []string{"A-name-dns1035", "H-release-name-format"}, ve.Rules())

	spec, err := tenant.ParseSpec([]byte("_x: 1\n"))
	require.NoError(t, err)
	_, err = spec.Check(tenant.Platform{})
	require.ErrorAs(t, err, &ve)
	require.Equal(t, tenant.DecidedByAPI, ve.Errors[0].Decider())
	require.NoError(t, ve.By(tenant.DecidedByChart, tenant.DecidedByHelm))
}

// A release tenantkit does not mirror is refused.
func TestPlatform_unknownRelease(t *testing.T) {
	_, err := tenant.KubernetesSpec{}.Check(tenant.Platform{Release: "v0.1"})
	require.ErrorIs(t, err, tenant.ErrUnknownRelease)
	require.True(t, tenant.Release("").Valid())
	require.Equal(t, tenant.LatestRelease, tenant.Releases()[len(tenant.Releases())-1])
	require.True(t, tenant.Release20260819.HasFluxCD())
	require.False(t, tenant.LatestRelease.HasFluxCD())
}

// With a catalogue of instance types Check decides the chart's lookup
// rules; without one it leaves them.
func TestKubernetesSpec_Check_instanceTypes(t *testing.T) {
	spec := tenant.KubernetesSpec{NodeGroups: map[string]tenant.NodeGroup{
		"md0": {InstanceType: "u9.huge", MaxReplicas: new(3)},
		"md1": {InstanceType: "u1.nano", MaxReplicas: new(3)},
	}}
	require.NoError(t, checkErr(spec.Check(tenant.Platform{})), "no catalogue: nothing to look up")
	err := checkErr(spec.Check(tenant.Platform{InstanceTypes: tenant.DefaultInstanceTypes()}))
	require.ErrorIs(t, err, tenant.ErrInstanceTypeNotFound)
	require.ErrorIs(t, err, tenant.ErrKubeletTotal, "u1.nano's 512Mi is below the default reservations")
	var ve *tenant.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, []string{"T-instancetype-lookup", "T-kubelet-memory-total"}, ve.Rules())

	require.ErrorIs(t, checkErr(tenant.KubernetesSpec{}.Check(tenant.Platform{InstanceTypes: map[string]tenant.InstanceType{}})),
		tenant.ErrInstanceTypeNotFound, "the chart's default md0 looks up u1.medium")
	require.NoError(t, checkErr(tenant.KubernetesSpec{}.Check(tenant.Platform{InstanceTypes: tenant.DefaultInstanceTypes()})))
}

func TestKubernetesSpec_Check_reportsEveryProblem(t *testing.T) {
	s := tenant.KubernetesSpec{
		Version: "v2",
		OIDC:    tenant.OIDC{Mode: tenant.OIDCSystem},
		Addons:  tenant.Addons{HAMi: tenant.Addon{Enabled: true}},
		ControlPlane: tenant.ControlPlane{APIServer: tenant.APIServer{
			ExtraArgs:    []string{"--oidc-client-id=x"},
			ExtraVolumes: []corev1.Volume{secretVolume("talos-ca")},
		}},
	}
	err := checkErr(s.Check(tenant.Platform{}))
	for _, want := range []error{tenant.ErrInvalidValue, tenant.ErrOIDCPlatformDisabled, tenant.ErrHAMiRequiresGPUOperator,
		tenant.ErrLegacyOIDCFlag, tenant.ErrReservedVolume} {
		require.ErrorIs(t, err, want)
	}
	var fe *tenant.FieldError
	require.True(t, errors.As(err, &fe))
	require.Equal(t, "tenant: spec.version: invalid value: \"v2\" is not one of v1.35, v1.34, v1.33, v1.32, v1.31", fe.Error())
}

func TestKubernetes_Check_names(t *testing.T) {
	for _, tt := range []struct {
		ns, name string
		ok       bool
	}{
		{"tenant-acme", "prod", true},
		{"tenant-root", "a1", true},
		{"default", "prod", false},
		{"tenant-acme", "Prod", false},
		{"tenant-acme", "", false},
		{"tenant-acme", "this-name-is-far-too-long-for-the-release-name-derived-from-it", false},
	} {
		err := checkErr(tenant.NewKubernetes(ref.Cluster{Namespace: tt.ns, Name: tt.name}, tenant.KubernetesSpec{}).Check(tenant.Platform{}))
		if tt.ok {
			require.NoError(t, err, "%s/%s", tt.ns, tt.name)
		} else {
			require.ErrorIs(t, err, ref.ErrInvalidName, "%s/%s", tt.ns, tt.name)
		}
	}
}

// Check reports every problem of the names, not the first one only.
func TestKubernetes_Check_everyNameProblem(t *testing.T) {
	for _, tt := range []struct {
		name  string
		c     ref.Cluster
		rules []string
		n     int
	}{
		{"namespace and name", ref.Cluster{Namespace: "default", Name: "Prod"}, []string{"A-name-dns1035", "H-release-name-format"}, 3},
		{"name refused by both", ref.Cluster{Namespace: "tenant-acme", Name: "1Prod"}, []string{"A-name-dns1035", "H-release-name-format"}, 2},
		{"too long and not a label", ref.Cluster{Namespace: "tenant-acme", Name: "x" + strings.Repeat("y", 42) + "_"},
			[]string{"H-release-name-53", "A-name-length", "A-name-dns1035", "H-release-name-format"}, 4},
		{"valid", ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tenant.NewKubernetes(tt.c, tenant.KubernetesSpec{}).Check(tenant.Platform{})
			if tt.n == 0 {
				require.NoError(t, err)
				return
			}
			var ve *tenant.ValidationError
			require.ErrorAs(t, err, &ve)
			require.Equal(t, tt.rules, ve.Rules())
			require.Len(t, ve.Errors, tt.n, "%v", err)
			require.ErrorIs(t, err, ref.ErrInvalidName)
		})
	}
}

func TestWarnings_String(t *testing.T) {
	unknown := &tenant.FieldError{Field: "spec.verison", Err: tenant.ErrUnknownField, Rule: "K-unknown-field", Detail: "not in the model; kept and written back"}
	neg := &tenant.FieldError{Field: "spec.nodeGroups.md0.minReplicas", Err: tenant.ErrMinReplicasNegative, Rule: "K-minreplicas-negative"}
	for _, tt := range []struct {
		name string
		w    tenant.Warnings
		want string
	}{
		{"none", nil, ""},
		{"one", tenant.Warnings{unknown}, "spec.verison: unknown field: not in the model; kept and written back"},
		{"two, one per line, no trailing newline", tenant.Warnings{unknown, neg},
			"spec.verison: unknown field: not in the model; kept and written back\nspec.nodeGroups.md0.minReplicas: " +
				strings.TrimPrefix(tenant.ErrMinReplicasNegative.Error(), "tenant: ")},
		{"a repeat listed once", tenant.Warnings{unknown, unknown}, "spec.verison: unknown field: not in the model; kept and written back"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.w.String())
		})
	}
}
