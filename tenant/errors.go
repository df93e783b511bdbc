package tenant

import (
	"errors"
	"strings"
)

// Errors of the chart's render failures (its templates' fail calls). Check
// and Validate return them inside *FieldError values, so errors.Is works on
// their result; FieldError.Rule tells the rules of one sentinel apart and
// FieldError.Detail carries the chart's message.
var (
	// ErrOIDCPlatformDisabled is returned when oidc.mode is System but the
	// platform flag authentication.oidc.enabled is off: the chart refuses to
	// render the Keycloak client without the platform realm.
	ErrOIDCPlatformDisabled = errors.New("tenant: oidc mode System needs platform OIDC (authentication.oidc.enabled)")
	// ErrOIDCCustomConfigConflict is returned when oidc.mode is CustomConfig
	// and both customConfig.config and customConfig.secretRef.name are set.
	ErrOIDCCustomConfigConflict = errors.New("tenant: oidc mode CustomConfig takes customConfig.config or customConfig.secretRef, not both")
	// ErrOIDCCustomConfigMissing is returned when oidc.mode is CustomConfig
	// and neither customConfig.config nor customConfig.secretRef.name is set.
	ErrOIDCCustomConfigMissing = errors.New("tenant: oidc mode CustomConfig needs customConfig.config or customConfig.secretRef")
	// ErrLegacyOIDCFlag is returned when controlPlane.apiServer.extraArgs
	// holds an --oidc-* or --authentication-config flag while OIDC is on:
	// the chart injects --authentication-config itself, and kube-apiserver
	// refuses to start with both.
	ErrLegacyOIDCFlag = errors.New("tenant: --oidc-* and --authentication-config flags conflict with OIDC mode")
	// ErrReservedVolume is returned for an extra volume named talos-ca or
	// talos-tls-cert (always chart-owned) or authentication-config
	// (chart-owned while OIDC is on).
	ErrReservedVolume = errors.New("tenant: volume name is reserved by the chart")
	// ErrVolumeSource is returned for an extra volume whose source is not
	// exactly one configMap or secret: the control-plane pod runs on the
	// management cluster, so host-reaching sources are refused. Every key of
	// the volume besides name counts as a source, unknown ones included.
	ErrVolumeSource = errors.New("tenant: extra volume needs exactly one source, configMap or secret")
	// ErrVolumeName is returned for an extra volume or volume mount without
	// a name.
	ErrVolumeName = errors.New("tenant: extra volume or mount has no name")
	// ErrDuplicateVolume is returned when two extra volumes share a name.
	ErrDuplicateVolume = errors.New("tenant: duplicate extra volume name")
	// ErrUndeclaredVolumeMount is returned for an extra volume mount that
	// names no volume declared in controlPlane.apiServer.extraVolumes.
	ErrUndeclaredVolumeMount = errors.New("tenant: volume mount names no declared extra volume")
	// ErrHAMiRequiresGPUOperator is returned when addons.hami is enabled
	// without addons.gpuOperator.
	ErrHAMiRequiresGPUOperator = errors.New("tenant: addons.hami requires addons.gpuOperator to be enabled")
	// ErrOuroborosRequiresIngress is returned when addons.ouroboros is enabled
	// without addons.ingressNginx.
	ErrOuroborosRequiresIngress = errors.New("tenant: addons.ouroboros requires addons.ingressNginx to be enabled")
	// ErrOuroborosGatewayAPI is returned when ouroboros's valuesOverride
	// turns its Gateway API controller on (ouroboros.controller.gatewayApi.
	// enabled is true, 1, yes, on or y in any case) without
	// addons.gatewayAPI, whether or not ouroboros itself is enabled.
	ErrOuroborosGatewayAPI = errors.New("tenant: ouroboros's gatewayApi override requires addons.gatewayAPI to be enabled")
)

// Errors of the chart's node group rules.
var (
	// ErrNodeGroupResources is returned when a node group with an
	// instanceType sets only one of resources.cpu and resources.memory (a
	// zero given as a YAML integer counts as unset, as in the chart). With
	// instanceType "" the chart accepts it and Check warns (K-resources-pair).
	ErrNodeGroupResources = errors.New("tenant: node group sets only one of resources.cpu and resources.memory; set both or neither")
	// ErrFieldRemoved is returned for a field the chart no longer supports
	// and fails on: a node group's ephemeralStorage (now diskSize).
	ErrFieldRemoved = errors.New("tenant: field is no longer supported")
	// ErrPodCPUInstanceType is returned when a node group sized by an
	// instanceType (not by both resources.cpu and resources.memory) sets
	// podCpuLimit or podCpuRequest, even to 0: KubeVirt refuses a VM with an
	// instancetype and CPU requests or limits.
	ErrPodCPUInstanceType = errors.New("tenant: podCpuLimit and podCpuRequest need a node group sized by resources, not by instanceType")
	// ErrPodCPUNegative is returned for a negative podCpuLimit or
	// podCpuRequest.
	ErrPodCPUNegative = errors.New("tenant: podCpuLimit and podCpuRequest must not be negative")
	// ErrPodCPUZero is returned for a zero podCpuLimit without a
	// podCpuRequest, and for a zero podCpuRequest beside a non-zero limit:
	// KubeVirt turns both into a Pod that is refused or reserves the whole
	// ceiling.
	ErrPodCPUZero = errors.New("tenant: a zero podCpuLimit or podCpuRequest only works as the pair 0/0")
	// ErrPodCPURequestAboveLimit is returned when podCpuRequest exceeds
	// podCpuLimit (compared as quantities: 1500m is below 2).
	ErrPodCPURequestAboveLimit = errors.New("tenant: podCpuRequest exceeds podCpuLimit")
	// ErrKubeletReservation is returned for a kubelet reservation
	// (systemReservedMemory, kubeReservedMemory, systemReservedCpu,
	// kubeReservedCpu) the chart refuses: not a quantity of its narrow form,
	// or not positive.
	ErrKubeletReservation = errors.New("tenant: invalid kubelet reservation")
	// ErrKubeletEviction is returned for eviction thresholds the chart
	// refuses: a malformed quantity or percentage, a percentage outside
	// (0, 100], a hard threshold not below the soft one, or one percentage
	// and one quantity (the defaults 7% and 10% count).
	ErrKubeletEviction = errors.New("tenant: invalid kubelet eviction threshold")
	// ErrKubeletTotal is returned when the reservations (and the hard
	// eviction threshold) take all of a node's memory or CPU, sizes from
	// resources; defaults count (5% of the node, within [256Mi, 1Gi] and
	// [50m, 500m] each).
	ErrKubeletTotal = errors.New("tenant: kubelet reservations exceed the node")
	// ErrKubeletNeedsSize is returned when kubelet memory (or CPU)
	// reservations are set on a node group whose size the chart cannot know:
	// no resources.memory (resources.cpu) and no instanceType.
	ErrKubeletNeedsSize = errors.New("tenant: kubelet reservations need the node's size")
	// ErrInstanceTypeNotFound is returned for a node group sized by an
	// instanceType that Platform.InstanceTypes does not list: the chart's
	// lookup finds no VirtualMachineClusterInstancetype of that name.
	ErrInstanceTypeNotFound = errors.New("tenant: instanceType not found in the cluster")
)

// Errors of the chart's health-check and autoscaler rules.
var (
	// ErrMaxUnhealthy is returned for a maxUnhealthy (the cluster's, or a
	// node group's override) that is neither a bare integer nor an integer
	// percentage.
	ErrMaxUnhealthy = errors.New("tenant: maxUnhealthy must be an integer or an integer percentage")
	// ErrDuration is returned for readyUnknownTimeout, readyFalseTimeout or
	// maxNodeProvisionTime outside the chart's duration form: up to three
	// segments of whole s, m or h, the first positive (30m, 1h30m, 20m0s).
	ErrDuration = errors.New("tenant: duration must be a whole number of s, m or h")
)

// Sentinels of tenantkit's own rules: rules tenantkit had before it
// followed the chart, kept because the values they catch are almost
// certainly mistakes. The chart accepts all of them; Check reports them as
// warnings, except an empty OIDC email and an inline customConfig the
// apiserver will refuse, which are errors decided by tenantkit.
var (
	// ErrMinReplicasNegative warns of a negative minReplicas (K-minreplicas-negative).
	ErrMinReplicasNegative = errors.New("tenant: minReplicas is negative")
	// ErrMaxReplicasBelowMin warns of maxReplicas below minReplicas
	// (K-maxreplicas-below-min).
	ErrMaxReplicasBelowMin = errors.New("tenant: maxReplicas is below minReplicas")
	// ErrEmptyName warns of an empty GPU name (K-gpu-name-empty: "" is a
	// string to the schema) and refuses an empty OIDC user email
	// (K-oidc-email-empty, tenantkit's error: the chart renders a binding
	// with an empty subject, which the tenant apiserver refuses).
	ErrEmptyName = errors.New("tenant: empty name")
	// ErrDuplicateUser warns of an OIDC user email listed twice
	// (K-oidc-email-duplicate): the chart applies a binding per entry, all
	// of one name, so the last entry's role wins.
	ErrDuplicateUser = errors.New("tenant: OIDC user listed twice")
	// ErrNodeGroupUnsized warns of a node group with instanceType "" and
	// neither resources.cpu nor resources.memory (K-nodegroup-unsized): the
	// VM gets no instance type and no explicit size. (With only one of them,
	// ErrNodeGroupResources warns.)
	ErrNodeGroupUnsized = errors.New("tenant: node group has neither an instanceType nor resources")
	// ErrCustomConfigUnreadable refuses an inline customConfig.config that
	// is not an AuthenticationConfiguration (K-customconfig-parse): the
	// chart stores it verbatim and kube-apiserver refuses it at start.
	// Check looks at its shape only; package oidc's renderer validates it
	// as kube-apiserver does.
	ErrCustomConfigUnreadable = errors.New("tenant: customConfig.config is not an AuthenticationConfiguration")
	// ErrCustomConfigVersion refuses an inline customConfig.config whose
	// apiVersion the cluster's kube-apiserver does not load
	// (K-authn-version), such as apiserver.config.k8s.io/v1 on v1.31 (see
	// AuthenticationConfigLoads).
	ErrCustomConfigVersion = errors.New("tenant: customConfig.config has an apiVersion the cluster's Kubernetes version does not load")
)

// Errors of the model: values outside the chart's schema and decoding.
var (
	// ErrInvalidValue is returned for a value the application's schema
	// refuses: a version, mode, role, resources preset or expose method
	// outside its enum, or "" where only an absent key means the default.
	ErrInvalidValue = errors.New("tenant: invalid value")
	// ErrRequiredField is returned when a document leaves out a key the
	// chart's schema requires and nothing supplies: minReplicas,
	// maxReplicas, instanceType and diskSize of every node group (the
	// chart's values give node groups no defaults), gpus[].name,
	// oidc.users[].email and .role.
	ErrRequiredField = errors.New("tenant: required field missing")
	// ErrNullValue is returned when a document sets a key to null where the
	// chart cannot take it: Helm deletes a key set to null, so a required
	// key (addons.*.enabled, controlPlane.replicas, oidc.mode, ...) goes
	// missing and the schema refuses the values, and version: null leaves
	// the chart without a Kubernetes version.
	ErrNullValue = errors.New("tenant: null deletes a value the chart needs")
	// ErrReservedKey is returned for a top-level key starting with "_":
	// cozystack-api refuses them, the platform's _cluster and _namespace
	// values are its own.
	ErrReservedKey = errors.New("tenant: values keys starting with '_' are reserved")
	// ErrMalformed is returned when a document is not valid YAML or JSON, or a
	// value has the wrong type.
	ErrMalformed = errors.New("tenant: malformed document")
	// ErrIntegerRange is a whole number beyond the integer field it sits
	// in (beyond int64: maxReplicas: 9223372036854775808,
	// controlPlane.replicas: 1e20). The chart's schema takes it as an
	// integer and Helm renders it as a float (9.223372036854776e+18),
	// which the objects the chart renders cannot take as a count;
	// tenantkit refuses it, as its own rule (K-integer-range, decider
	// tenantkit), where the parsers would otherwise call the document
	// malformed. ParseSpec and ParseKubernetes report it with the
	// document's other problems, leaving the field unset.
	ErrIntegerRange = errors.New("tenant: integer out of range")
	// ErrUnknownField names a field the model does not know. The chart's
	// schema allows unknown fields and its templates ignore them, so for a
	// Kubernetes application it is a warning of Check (a typo such as
	// "verison" is reported, never silently dropped) and the field is kept
	// and written back. ParseTenant still refuses them (an error).
	ErrUnknownField = errors.New("tenant: unknown field")
	// ErrDuplicateField is a document setting the same field twice: a
	// warning of ParseSpec and ParseKubernetes (K-duplicate-key; the last
	// value counts, as in Helm), an error of ParseTenant.
	ErrDuplicateField = errors.New("tenant: duplicate field")
	// ErrUnknownRelease is returned by Check for a Platform.Release that
	// is not one of Releases.
	ErrUnknownRelease = errors.New("tenant: unknown Cozystack release")
)

// FieldError is one problem with one field. Err is one of the package's
// sentinels; Rule names the chart rule it mirrors; Detail says what
// exactly is wrong, in the chart's own words where the chart has them.
type FieldError struct {
	// Field is the path of the field, as in the application's spec:
	// "spec.controlPlane.apiServer.extraVolumes[1].name".
	Field string
	// Err is the sentinel naming the rule, such as ErrReservedVolume.
	Err error
	// Rule is the rule's ID in the catalogue of the chart's decisions
	// (tenant/testdata/chart/RULES.md): "S-..." the values schema, "T-..."
	// a template fail, "H-..." Helm, "A-..." cozystack-api, "K-..." a rule
	// of tenantkit's own (a warning, or an error where the chart renders
	// what cannot work). Empty for syntax errors. Decider says which.
	Rule string
	// Detail describes the offending value; it never holds secrets.
	Detail string
}

// Error returns "tenant: <field>: <rule>[: <detail>]".
func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString("tenant: ")
	b.WriteString(e.Field)
	b.WriteString(": ")
	msg := e.Err.Error()
	for _, pkg := range []string{"tenant: ", "oidc: "} {
		msg = strings.TrimPrefix(msg, pkg)
	}
	b.WriteString(msg)
	if e.Detail != "" && e.Detail != msg {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Unwrap returns the sentinel.
func (e *FieldError) Unwrap() error { return e.Err }

// ValidationError lists every problem found in one object, in field order.
// errors.Is(err, ErrX) reports whether any of them is ErrX; errors.As finds
// the first *FieldError.
type ValidationError struct {
	// Errors holds one entry per problem; it is never empty.
	Errors []*FieldError
}

// Error joins the problems with "; ".
func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, fe := range e.Errors {
		msgs[i] = fe.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap returns the problems, for errors.Is and errors.As.
func (e *ValidationError) Unwrap() []error {
	out := make([]error, len(e.Errors))
	for i, fe := range e.Errors {
		out[i] = fe
	}
	return out
}

// Has reports whether any problem matches target (a sentinel).
func (e *ValidationError) Has(target error) bool {
	for _, fe := range e.Errors {
		if errors.Is(fe.Err, target) {
			return true
		}
	}
	return false
}

// Rules returns the rule IDs of the problems, in order, without repeats.
func (e *ValidationError) Rules() []string { return rulesOf(e.Errors) }

// Warnings are what Check reports about values the chart accepts but
// tenantkit would not write: fields the model does not know, and the rules
// tenantkit had before it followed the chart (a negative minReplicas, an
// empty GPU name, ...), each a *FieldError whose Rule starts with "K-".
// A caller that wants them refused refuses a non-empty Warnings.
type Warnings []*FieldError

// Has reports whether any warning matches target (a sentinel).
func (w Warnings) Has(target error) bool {
	for _, fe := range w {
		if errors.Is(fe.Err, target) {
			return true
		}
	}
	return false
}

// Rules returns the rule IDs of the warnings, in order, without repeats.
func (w Warnings) Rules() []string { return rulesOf(w) }

// String lists the warnings one per line as "field: problem: detail",
// without the "tenant: " prefix of each error and without a trailing
// newline; a warning listed twice is listed once. No warnings is "".
func (w Warnings) String() string {
	lines := make([]string, 0, len(w))
	seen := map[string]bool{}
	for _, fe := range w {
		if l := strings.TrimPrefix(fe.Error(), "tenant: "); !seen[l] {
			seen[l] = true
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

func rulesOf(fes []*FieldError) []string {
	var out []string
	seen := map[string]bool{}
	for _, fe := range fes {
		if fe.Rule != "" && !seen[fe.Rule] {
			seen[fe.Rule] = true
			out = append(out, fe.Rule)
		}
	}
	return out
}
