package backup

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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
	"pods":                   "the pod and init-restore-hook actions rewrite pods (pkg/restore/actions/pod_action.go)",
	"jobs.batch":             "the job action drops controller-uid selectors (pkg/restore/actions/job_action.go)",
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
		serviceAction(&s, preserveNodePorts)
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
	case "customresourcedefinitions.apiextensions.k8s.io":
		return crdAction(obj)
	case "rolebindings.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io":
		return bindingAction(gr, obj, mapping)
	}
	return obj, nil
}

// serviceAction is pkg/restore/actions/service_action.go:51-80: the
// cluster IPs go (unless headless), and so do node ports not named in the
// last-applied-configuration, unless preserveNodePorts. Not modelled:
// ports set by server-side apply, which Velero finds in managedFields
// (service_action.go:222-260) and keeps; the plan clears them.
func serviceAction(s *corev1.Service, preserve bool) {
	if s.Spec.ClusterIP != "None" {
		s.Spec.ClusterIP = ""
		s.Spec.ClusterIPs = nil
	}
	if preserve {
		return
	}
	if s.Spec.Type != corev1.ServiceTypeExternalName {
		explicit, unnamed := lastAppliedNodePorts(s.Annotations["kubectl.kubernetes.io/last-applied-configuration"])
		for i, p := range s.Spec.Ports {
			if (p.Name != "" && explicit[p.Name]) || (p.Name == "" && unnamed[int(p.NodePort)]) {
				continue
			}
			s.Spec.Ports[i].NodePort = 0
		}
	}
	// service_action.go:110-146 keeps an explicitly set health check port.
	if s.Spec.HealthCheckNodePort != 0 {
		var applied struct {
			Spec struct {
				HealthCheckNodePort int32 `json:"healthCheckNodePort"`
			} `json:"spec"`
		}
		_ = json.Unmarshal([]byte(s.Annotations["kubectl.kubernetes.io/last-applied-configuration"]), &applied)
		if applied.Spec.HealthCheckNodePort == 0 {
			s.Spec.HealthCheckNodePort = 0
		}
	}
}

func lastAppliedNodePorts(config string) (named map[string]bool, unnamed map[int]bool) {
	named, unnamed = map[string]bool{}, map[int]bool{}
	var applied struct {
		Spec struct {
			Ports []struct {
				Name     *string `json:"name"`
				NodePort any     `json:"nodePort"`
			} `json:"ports"`
		} `json:"spec"`
	}
	if config == "" || json.Unmarshal([]byte(config), &applied) != nil {
		return
	}
	for _, p := range applied.Spec.Ports {
		n := 0
		switch v := p.NodePort.(type) {
		case float64:
			n = int(v)
		case string:
			fmt.Sscanf(v, "%d", &n)
		}
		if n <= 0 {
			continue
		}
		if p.Name == nil {
			unnamed[n] = true
		} else {
			named[*p.Name] = true
		}
	}
	return
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
