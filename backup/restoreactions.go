package backup

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"reflect"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Labels Velero puts on every restored object (restore.go:2452-2466).
const (
	labelBackupName  = "velero.io/backup-name"
	labelRestoreName = "velero.io/restore-name"
)

// resetMetadataAndStatus strips what Velero strips from both the backed-up
// and the in-cluster object before comparing them (restore.go:2416-2450):
// it keeps labels, annotations, finalizers and managedFields.
func resetMetadataAndStatus(obj map[string]any) {
	if md, ok := obj["metadata"].(map[string]any); ok {
		for _, k := range []string{"generateName", "selfLink", "uid", "resourceVersion", "generation",
			"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences"} {
			delete(md, k)
		}
	}
	delete(obj, "status")
}

// addRestoreLabels sets Velero's two restore labels. Velero copies the
// same values onto the in-cluster object before comparing
// (restore.go:1871-1874), so fixed values compare the same way.
func addRestoreLabels(u *unstructured.Unstructured) {
	l := u.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[labelBackupName], l[labelRestoreName] = "-", "-"
	u.SetLabels(l)
}

// approximateActions are resources whose built-in restore item actions
// depend on more than the item (other objects, volume snapshots, the
// node); the plan compares them without the action and says so.
var approximateActions = map[string]string{
	"persistentvolumeclaims": "the PVC action and volume handling rewrite claims (pkg/restore/actions/pvc_action.go)",
	"persistentvolumes":      "volumes are reprovisioned or restored from snapshots (restore.go:1511-1590)",
}

// applyRestoreAction runs the model of the built-in restore item action
// for gr on obj, as Velero does before comparing or creating
// (restore.go:1600-1640). It returns the object to compare.
func applyRestoreAction(gr string, obj map[string]any, mapping map[string]string, preserveNodePorts bool) (map[string]any, error) {
	out, err := restoreAction(gr, obj, mapping, preserveNodePorts)
	if err != nil || sameMap(out, obj) {
		return out, err
	}
	// The action went through a typed object. Velero v1.18.3 is built with
	// k8s.io/apimachinery v0.33 (its go.mod), whose ObjectMeta has
	// creationTimestamp "omitempty" but not "omitzero": converting back to
	// unstructured writes "creationTimestamp": null, which then differs
	// from the cluster's copy. v0.37 leaves it out; put it back.
	if md, ok := out["metadata"].(map[string]any); ok {
		if _, set := md["creationTimestamp"]; !set {
			md["creationTimestamp"] = nil
		}
	}
	return out, nil
}

// sameMap reports whether a and b are the same map (not a copy).
func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func restoreAction(gr string, obj map[string]any, mapping map[string]string, preserveNodePorts bool) (map[string]any, error) {
	switch gr {
	case "services":
		var s corev1.Service
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &s); err != nil {
			return nil, err
		}
		if err := serviceAction(&s, preserveNodePorts); err != nil {
			return nil, err
		}
		return runtime.DefaultUnstructuredConverter.ToUnstructured(&s)
	case "secrets":
		if t, _ := obj["type"].(string); t != string(corev1.SecretTypeServiceAccountToken) {
			return obj, nil
		}
		var s corev1.Secret
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &s); err != nil {
			return nil, err
		}
		// pkg/restore/actions/secret_action.go:93-99
		delete(s.Annotations, "kubernetes.io/service-account.uid")
		delete(s.Data, "token")
		delete(s.Data, "ca.crt")
		return runtime.DefaultUnstructuredConverter.ToUnstructured(&s)
	case "serviceaccounts":
		// pkg/restore/actions/service_account_action.go:49-80: the
		// <name>-token- secret reference goes (the last one only).
		var sa corev1.ServiceAccount
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &sa); err != nil {
			return nil, err
		}
		for i := len(sa.Secrets) - 1; i >= 0; i-- {
			if strings.HasPrefix(sa.Secrets[i].Name, sa.Name+"-token-") {
				sa.Secrets = append(sa.Secrets[:i], sa.Secrets[i+1:]...)
				break
			}
		}
		return runtime.DefaultUnstructuredConverter.ToUnstructured(&sa)
	case "pods":
		return podAction(obj)
	case "jobs.batch":
		return jobAction(obj)
	case "customresourcedefinitions.apiextensions.k8s.io":
		return crdAction(obj)
	case "rolebindings.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io":
		return bindingAction(gr, obj, mapping)
	}
	return obj, nil
}

// serviceAction is pkg/restore/actions/service_action.go:51-80: the
// cluster IPs go (unless headless); unless preserveNodePorts, so do the
// node ports no one set explicitly: with a last-applied-configuration
// annotation, those it does not name (service_action.go:148-217);
// without one, those no managedFields entry owns (:219-256), so a port a
// client set at create or by server-side apply is kept. The health check
// node port likewise (:82-146).
func serviceAction(s *corev1.Service, preserve bool) error {
	if s.Spec.ClusterIP != "None" {
		s.Spec.ClusterIP = ""
		s.Spec.ClusterIPs = nil
	}
	if preserve {
		return nil
	}
	config, applied := s.Annotations["kubectl.kubernetes.io/last-applied-configuration"]
	managed, err := managedServiceFields(s.ManagedFields)
	if err != nil {
		return err
	}
	if s.Spec.Type != corev1.ServiceTypeExternalName {
		if applied {
			explicit, unnamed, err := lastAppliedNodePorts(config)
			if err != nil {
				return err
			}
			for i, p := range s.Spec.Ports {
				if (p.Name != "" && !explicit[p.Name]) || (p.Name == "" && !unnamed[int(p.NodePort)]) {
					s.Spec.Ports[i].NodePort = 0
				}
			}
		} else {
			for i, p := range s.Spec.Ports {
				if !managed.ports[fmt.Sprintf(`k:{"port":%d,"protocol":"%s"}`, p.Port, p.Protocol)] {
					s.Spec.Ports[i].NodePort = 0
				}
			}
		}
	}
	if s.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal ||
		s.Spec.Type != corev1.ServiceTypeLoadBalancer || s.Spec.HealthCheckNodePort == 0 {
		return nil
	}
	if applied {
		var a struct {
			Spec struct {
				HealthCheckNodePort float64 `json:"healthCheckNodePort"`
			} `json:"spec"`
		}
		if err := json.Unmarshal([]byte(config), &a); err != nil {
			return err
		}
		if a.Spec.HealthCheckNodePort != 0 {
			return nil
		}
	}
	if !managed.healthCheck {
		s.Spec.HealthCheckNodePort = 0
	}
	return nil
}

// serviceFields is what a Service's managedFields say its clients set.
type serviceFields struct {
	ports       map[string]bool // port keys (`k:{"port":80,"protocol":"TCP"}`) with f:nodePort
	healthCheck bool            // f:spec.f:healthCheckNodePort
}

func managedServiceFields(entries []metav1.ManagedFieldsEntry) (serviceFields, error) {
	out := serviceFields{ports: map[string]bool{}}
	for _, e := range entries {
		if e.FieldsV1 == nil {
			continue
		}
		var fields struct {
			Spec struct {
				Ports       map[string]map[string]any `json:"f:ports"`
				HealthCheck *map[string]any           `json:"f:healthCheckNodePort"`
			} `json:"f:spec"`
		}
		if err := json.Unmarshal(e.FieldsV1.Raw, &fields); err != nil {
			return out, err
		}
		for k, p := range fields.Spec.Ports {
			if _, ok := p["f:nodePort"]; ok {
				out.ports[k] = true
			}
		}
		out.healthCheck = out.healthCheck || fields.Spec.HealthCheck != nil
	}
	return out, nil
}

func lastAppliedNodePorts(config string) (named map[string]bool, unnamed map[int]bool, err error) {
	named, unnamed = map[string]bool{}, map[int]bool{}
	var applied map[string]any
	if err := json.Unmarshal([]byte(config), &applied); err != nil {
		return nil, nil, err
	}
	ports, _, _ := unstructured.NestedSlice(applied, "spec", "ports")
	for _, e := range ports {
		p, ok := e.(map[string]any)
		if !ok {
			continue
		}
		n := 0
		switch v := p["nodePort"].(type) {
		case float64:
			n = int(v)
		case int64:
			n = int(v)
		case string:
			if n, err = strconv.Atoi(v); err != nil {
				return nil, nil, err
			}
		}
		if n <= 0 {
			continue
		}
		if name, ok := p["name"]; ok {
			named[fmt.Sprint(name)] = true
		} else {
			unnamed[n] = true
		}
	}
	return named, unnamed, nil
}

// podAction is pkg/restore/actions/pod_action.go:46-96: the node name
// and priority go, and so do the volumes and mounts named
// "<serviceAccountName>-token-...".
func podAction(obj map[string]any) (map[string]any, error) {
	var pod corev1.Pod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &pod); err != nil {
		return nil, err
	}
	pod.Spec.NodeName = ""
	pod.Spec.Priority = nil
	prefix := pod.Spec.ServiceAccountName + "-token-"
	var vols []corev1.Volume
	for _, v := range pod.Spec.Volumes {
		if !strings.HasPrefix(v.Name, prefix) {
			vols = append(vols, v)
		}
	}
	pod.Spec.Volumes = vols
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			var mounts []corev1.VolumeMount
			for _, m := range cs[i].VolumeMounts {
				if !strings.HasPrefix(m.Name, prefix) {
					mounts = append(mounts, m)
				}
			}
			cs[i].VolumeMounts = mounts
		}
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(&pod)
}

// jobAction is pkg/restore/actions/job_action.go:48-67: the
// controller-uid labels leave the selector and the pod template.
func jobAction(obj map[string]any) (map[string]any, error) {
	var job batchv1.Job
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &job); err != nil {
		return nil, err
	}
	for _, l := range []string{"controller-uid", "batch.kubernetes.io/controller-uid"} {
		if job.Spec.Selector != nil {
			delete(job.Spec.Selector.MatchLabels, l)
		}
		delete(job.Spec.Template.Labels, l)
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(&job)
}

// crdAction is pkg/restore/actions/crd_v1_preserve_unknown_fields_action.go:48-100:
// a v1 CRD goes through JSON into the typed object and back.
func crdAction(obj map[string]any) (map[string]any, error) {
	if obj["apiVersion"] != "apiextensions.k8s.io/v1" {
		return obj, nil
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var crd apiextv1.CustomResourceDefinition
	if err := json.Unmarshal(data, &crd); err != nil {
		return nil, err
	}
	if crd.Spec.PreserveUnknownFields {
		crd.Spec.PreserveUnknownFields = false
		for _, v := range crd.Spec.Versions {
			if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
				t := true
				v.Schema.OpenAPIV3Schema.XPreserveUnknownFields = &t
			}
		}
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(&crd)
}

// bindingAction is pkg/restore/actions/{rolebinding,clusterrolebinding}_action.go:
// with a namespace mapping, subjects move to the mapped namespaces.
func bindingAction(gr string, obj map[string]any, mapping map[string]string) (map[string]any, error) {
	if len(mapping) == 0 {
		return obj, nil
	}
	var subjects *[]rbacv1.Subject
	var typed any
	if gr == "rolebindings.rbac.authorization.k8s.io" {
		rb := &rbacv1.RoleBinding{}
		typed, subjects = rb, &rb.Subjects
	} else {
		crb := &rbacv1.ClusterRoleBinding{}
		typed, subjects = crb, &crb.Subjects
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, typed); err != nil {
		return nil, err
	}
	for i, s := range *subjects {
		if n, ok := mapping[s.Namespace]; ok {
			(*subjects)[i].Namespace = n
		}
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
}

// objectHash hashes an object's canonical JSON (encoding/json sorts map
// keys), so two objects hash the same when they are equal as
// equality.Semantic.DeepEqual sees decoded JSON (restore.go:1877).
func objectHash(seed maphash.Seed, obj map[string]any) (uint64, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return 0, err
	}
	return maphash.Bytes(seed, data), nil
}
