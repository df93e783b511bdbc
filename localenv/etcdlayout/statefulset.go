package etcdlayout

import (
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// statefulSet is the operator's StatefulSet merged with the chart's pod
// template (metrics port, Cozystack label, topology spread) and the startup
// probe Cozystack uses (300 × 5 s, so that slow members are not killed).
func statefulSet(cfg Config) *appsv1.StatefulSet {
	secretVolume := func(name, secret string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}
	}
	probe := func(path string, failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(metricsPort)}},
			PeriodSeconds:    5,
			FailureThreshold: failures,
		}
	}
	fieldEnv := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	claim := corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: VolumeClaimTemplate},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: cfg.Size}},
		},
	}
	if cfg.StorageClass != "" {
		claim.Spec.StorageClassName = &cfg.StorageClass
	}
	etcd := corev1.Container{
		Name:    "etcd",
		Image:   cfg.Image,
		Command: []string{"etcd"},
		Args:    etcdArgs(cfg),
		Ports: []corev1.ContainerPort{
			{Name: "peer", ContainerPort: peerPort},
			{Name: "client", ContainerPort: clientPort},
			{Name: "metrics", ContainerPort: metricsPort, Protocol: corev1.ProtocolTCP},
		},
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: ClusterStateConfigMap}}}},
		Env: []corev1.EnvVar{fieldEnv("POD_NAME", "metadata.name"), fieldEnv("POD_NAMESPACE", "metadata.namespace")},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "data", MountPath: "/var/run/etcd"},
			{Name: "peer-trusted-ca-certificate", MountPath: "/etc/etcd/pki/peer/ca", ReadOnly: true},
			{Name: "peer-certificate", MountPath: "/etc/etcd/pki/peer/cert", ReadOnly: true},
			{Name: "server-certificate", MountPath: "/etc/etcd/pki/server/cert", ReadOnly: true},
			{Name: "client-trusted-ca-certificate", MountPath: "/etc/etcd/pki/client/ca", ReadOnly: true},
		},
		StartupProbe:   probe("/readyz?serializable=false", 300),
		ReadinessProbe: probe("/readyz", 0),
		LivenessProbe:  probe("/livez", 0),
	}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: StatefulSetName, Namespace: cfg.Namespace},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            &cfg.Replicas,
			ServiceName:         headlessService,
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: selectorLabels()},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(podLabels)},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{etcd},
					Volumes: []corev1.Volume{
						{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: VolumeClaimTemplate}}},
						secretVolume("peer-trusted-ca-certificate", SecretPeerCA),
						secretVolume("peer-certificate", SecretPeer),
						secretVolume("server-certificate", SecretServer),
						secretVolume("client-trusted-ca-certificate", SecretCA),
					},
					TopologySpreadConstraints: spread(cfg.StrictSpread),
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{claim},
		},
	}
}

// spread is the chart's topology spread constraint: one member per node,
// preferred (or required with strict).
func spread(strict bool) []corev1.TopologySpreadConstraint {
	when := corev1.ScheduleAnyway
	if strict {
		when = corev1.DoNotSchedule
	}
	return []corev1.TopologySpreadConstraint{{
		MaxSkew:           1,
		TopologyKey:       corev1.LabelHostname,
		WhenUnsatisfiable: when,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/instance": clusterName}},
	}}
}
