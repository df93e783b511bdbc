package tenanttest

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cozystack/tenantkit/tenant"
)

// FullSpec sets every field of the model, with values that pass
// KubernetesSpec.Validate on a platform with OIDC enabled. Each call
// returns a new value.
func FullSpec() tenant.KubernetesSpec {
	q := resource.MustParse
	return tenant.KubernetesSpec{
		Version:      "v1.34",
		Host:         "prod.acme.example.org",
		StorageClass: "local",
		ControlPlane: tenant.ControlPlane{
			Replicas: new(3),
			APIServer: tenant.APIServer{
				Resources:       tenant.Resources{CPU: new(q("2")), Memory: new(q("4Gi"))},
				ResourcesPreset: "c1.large",
				ExtraArgs:       []string{"--requestheader-uid-headers=X-Remote-Uid", "--v=2"},
				ExtraVolumes: []corev1.Volume{
					{Name: "audit-policy", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: "audit-policy"}}}},
					{Name: "webhook", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "webhook-kubeconfig"}}},
				},
				ExtraVolumeMounts: []corev1.VolumeMount{
					{Name: "audit-policy", MountPath: "/etc/kubernetes/audit", ReadOnly: true},
					{Name: "webhook", MountPath: "/etc/kubernetes/webhook", ReadOnly: true},
				},
			},
			ControllerManager: tenant.Component{ResourcesPreset: "t1.small"},
			Scheduler:         tenant.Component{Resources: tenant.Resources{CPU: new(q("500m")), Memory: new(q("512Mi"))}},
			Konnectivity:      tenant.Konnectivity{Server: tenant.Component{ResourcesPreset: "t1.nano"}},
		},
		NodeGroups: map[string]tenant.NodeGroup{
			"md0": {MinReplicas: 1, MaxReplicas: new(5), InstanceType: "u1.large", DiskSize: new(q("50Gi")),
				Roles: []string{"ingress-nginx"}, Kubelet: tenant.Kubelet{EvictionHardMemory: "5%", EvictionSoftMemory: "12%"}},
			"gpu": {MaxReplicas: new(3), InstanceType: "u1.xlarge", DiskSize: new(q("40Gi")), StorageClass: "replicated",
				GPUs: []tenant.GPU{{Name: "nvidia.com/GA102GL_A10"}}, LogSerialConsole: true,
				Resources: tenant.Resources{CPU: new(q("8")), Memory: new(q("32Gi"))},
				Kubelet: tenant.Kubelet{SystemReservedMemory: "512Mi", KubeReservedMemory: "512Mi",
					SystemReservedCPU: "100m", KubeReservedCPU: "100m"},
				PodCPULimit: new(q("2")), PodCPURequest: new(q("100m")), MaxUnhealthy: "1", NodeStartupTimeout: "30m"},
		},
		Addons: tenant.Addons{
			CertManager:  tenant.Addon{Enabled: true},
			Cilium:       tenant.TunableAddon{ValuesOverride: map[string]any{"cilium": map[string]any{"MTU": int64(1400)}}},
			GatewayAPI:   tenant.GatewayAPIAddon{Enabled: true},
			IngressNginx: tenant.IngressNginxAddon{Enabled: true, ExposeMethod: tenant.LoadBalancer, Hosts: []string{"apps.acme.example.org"}},
			GPUOperator:  tenant.Addon{Enabled: true},
			HAMi: tenant.Addon{Enabled: true, ValuesOverride: map[string]any{"hami": map[string]any{
				"devicePlugin": map[string]any{"deviceSplitCount": int64(4), "deviceMemoryScaling": 1.5}}}},
			FluxCD:                tenant.Addon{Enabled: true},
			MonitoringAgents:      tenant.Addon{Enabled: true},
			VerticalPodAutoscaler: tenant.TunableAddon{ValuesOverride: map[string]any{"vpaForVPA": true}},
			Velero: tenant.Addon{Enabled: true, ValuesOverride: map[string]any{"velero": map[string]any{
				"configuration": map[string]any{"features": "EnableCSI"}}}},
			CoreDNS:   tenant.TunableAddon{ValuesOverride: map[string]any{"coredns": map[string]any{"replicaCount": int64(3)}}},
			Ouroboros: tenant.Addon{Enabled: true},
		},
		OIDC: tenant.OIDC{
			Mode:  tenant.OIDCSystem,
			Users: []tenant.OIDCUser{{Email: "alice@acme.example", Role: tenant.RoleAdmin}, {Email: "bob@acme.example", Role: tenant.RoleView}},
		},
		Talos: tenant.Talos{Version: "v1.13.6", SchematicID: "ce4c98", ImageFactoryURL: "https://factory.internal", InstallerRepository: "registry.internal/installer",
			RegistryMirrors: map[string]tenant.RegistryMirror{"docker.io": {Endpoints: []string{"https://mirror.internal/docker"}, SkipFallback: true, OverridePath: true}}},
		NodeHealthCheck:      tenant.NodeHealthCheck{MaxUnhealthy: "0%", NodeStartupTimeout: "30m", ReadyUnknownTimeout: "2m", ReadyFalseTimeout: "5m"},
		MaxNodeProvisionTime: "45m",
		Images:               tenant.Images{WaitForKubeconfig: "mirror/busybox:1", Kubectl: "mirror/kubectl:1", TalosCSRSigner: "mirror/signer:1"},
		SchedulingClass:      "gold",
	}
}
