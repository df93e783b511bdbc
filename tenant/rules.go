package tenant

import (
	"fmt"
	"strings"

	"github.com/cozystack/tenantkit/ref"
)

// rule is the one declaration of a rule of the chart's catalogue
// (testdata/chart/RULES.md): its ID (FieldError.Rule), who decides it,
// the sentinel its problems wrap (nil where tenantkit reports nothing under
// this ID: the typed model or the decoder holds it, or it is out of
// scope), the releases it holds for (nil: every release) and what it
// checks. The catalogue's index is rendered from ruleTable
// (TestRuleTable_documented) and the chart corpus names exactly these
// rules, each at least once (TestChartCorpus).
type rule struct {
	id       string
	by       Decider
	err      error
	releases []Release
	does     string
}

// ruleID names a rule: an index of ruleTable.
type ruleID int

// noRule is the ruleID of none (a chart tag naming no rule).
const noRule ruleID = -1

// allReleases is the release range of a rule that every release holds.
var allReleases []Release

// For maintainers: to add a rule, add its constant below and its row to
// ruleTable, report it with problems.add, run
// TENANTKIT_UPDATE_DOCS=1 go test -run TestRuleTable_documented ./tenant
// and give the chart corpus a case naming it.

// The rules, in the catalogue's order: the values schema (s...), the
// chart's templates (t...), rendered artefacts (r...), Helm (h...),
// cozystack-api (a...) and tenantkit's own rules (k...).
const (
	sUnknownFieldsAllowed ruleID = iota
	sNullRequired
	sQuantity
	sType
	sStorageClass
	sVersionEnum
	sHost
	sSchedulingClass
	sImages
	sMaxNodeProvisionTime
	sNodeGroupRequired
	sNodeGroupMinReplicas
	sNodeGroupMaxReplicas
	sNodeGroupInstanceType
	sNodeGroupDiskSize
	sNodeGroupStorageClass
	sNodeGroupRoles
	sNodeGroupResources
	sNodeGroupGPUs
	sNodeGroupKubelet
	sNodeGroupLogSerialConsole
	sNodeGroupMaxUnhealthy
	sNodeGroupNodeStartupTimeout
	sNodeGroupPodCPU
	sAddonsRequired
	sAddonFields
	sIngressExposeMethodEnum
	sIngressHosts
	rAddonsList
	sControlPlaneRequired
	sControlPlaneReplicas
	sResourcesPresetEnum
	sComponentResources
	sAPIServerExtra
	sTalos
	sTalosRegistryMirrors
	sNodeHealthCheck
	sOIDCModeEnum
	sOIDCCustomConfig
	sOIDCUsers
	sNullNoDefault
	sUnknownFieldsRelease
	tEphemeralStorageRemoved
	tNodeGroupResourcesPair
	tPodCPULimitInstanceType
	tPodCPURequestInstanceType
	tPodCPULimitNegative
	tPodCPURequestNegative
	tPodCPULimitZeroAlone
	tPodCPURequestZeroWithLimit
	tPodCPURequestAboveLimit
	tInstanceTypeLookup
	tKubeletReservedFormat
	tKubeletReservedPositive
	tEvictionFormat
	tEvictionPercentNumber
	tEvictionPercentRange
	tEvictionHardBelowSoft
	tEvictionUnitMix
	tKubeletMemoryTotal
	tKubeletCPUTotal
	tKubeletNeedsMemory
	tKubeletNeedsCPU
	tMaxUnhealthyFormat
	tDurationPositive
	tNodeStartupTimeout
	tSectionNull
	tResourcesFlat
	tVersionMap
	tTalosSupportMatrix
	tOIDCSystemPlatform
	tOIDCCustomConfigBoth
	tOIDCCustomConfigNeither
	tOIDCLegacyFlag
	tOIDCAuthnVolumeReserved
	tExtraVolumeReservedName
	tExtraVolumeNameRequired
	tExtraVolumeDuplicate
	tExtraVolumeSourceAllowed
	tExtraVolumeOneSource
	tExtraVolumeMountNameRequired
	tExtraVolumeMountUndeclared
	tHAMiGPUOperator
	tOuroborosIngress
	tOuroborosGatewayAPI
	hReleaseName53
	hReleaseNameFormat
	hOracleHelm4
	hValuesYAML
	aNameLength
	aNameDNS1035
	aNameLegacyCap
	aInternalKeys
	aVerdict
	aNullNormalize
	rAuthnCustom
	kUnknownField
	kMinReplicasNegative
	kMaxReplicasBelowMin
	kGPUNameEmpty
	kOIDCEmailEmpty
	kResourcesPair
	kNodeGroupUnsized
	kEmptyAsDefault
	kAuthnVersion
	kCustomConfigParse
	kDuplicateKey
	kIntegerRange
	kOIDCEmailDuplicate

	ruleCount // the number of rules
)

// ruleTable declares every rule once.
var ruleTable = [ruleCount]rule{
	sUnknownFieldsAllowed:         {"S-unknown-fields-allowed", DecidedByChart, nil, allReleases, "no object of the schema sets additionalProperties: false; unknown keys are accepted and ignored"},
	sNullRequired:                 {"S-null-required", DecidedByChart, ErrNullValue, allReleases, "an explicit null on a required key: Helm deletes it and the schema misses it"},
	sQuantity:                     {"S-quantity", DecidedByChart, ErrMalformed, allReleases, `a quantity is an integer or a string of the quantity pattern (not a fraction, "" or GB)`},
	sType:                         {"S-type", DecidedByChart, ErrMalformed, allReleases, "every property is typed; a value of another JSON type (null included where nothing defaults it) is refused"},
	sStorageClass:                 {"S-storageclass", DecidedByChart, nil, allReleases, "storageClass is a string (immutable on update, not decidable on one value set)"},
	sVersionEnum:                  {"S-version-enum", DecidedByChart, ErrInvalidValue, allReleases, `version is one of the supported Kubernetes versions; "" is not`},
	sHost:                         {"S-host", DecidedByChart, nil, allReleases, `host is a string ("" means <release>.<tenant host>)`},
	sSchedulingClass:              {"S-schedulingclass", DecidedByChart, nil, allReleases, "schedulingClass is a string of at most 63 characters"},
	sImages:                       {"S-images", DecidedByChart, nil, allReleases, "images.* are strings"},
	sMaxNodeProvisionTime:         {"S-maxnodeprovisiontime", DecidedByChart, nil, allReleases, "maxNodeProvisionTime is a string"},
	sNodeGroupRequired:            {"S-nodegroup-required", DecidedByChart, ErrRequiredField, allReleases, "a node group sets minReplicas, maxReplicas, instanceType and diskSize"},
	sNodeGroupMinReplicas:         {"S-nodegroup-minreplicas", DecidedByChart, nil, allReleases, "minReplicas is an integer, no minimum"},
	sNodeGroupMaxReplicas:         {"S-nodegroup-maxreplicas", DecidedByChart, nil, allReleases, "maxReplicas is an integer, no minimum, no relation to minReplicas"},
	sNodeGroupInstanceType:        {"S-nodegroup-instancetype", DecidedByChart, nil, allReleases, `instanceType is a string ("" satisfies required)`},
	sNodeGroupDiskSize:            {"S-nodegroup-disksize", DecidedByChart, nil, allReleases, "diskSize is a quantity"},
	sNodeGroupStorageClass:        {"S-nodegroup-storageclass", DecidedByChart, nil, allReleases, "a node group's storageClass is a string"},
	sNodeGroupRoles:               {"S-nodegroup-roles", DecidedByChart, nil, allReleases, "roles is an array of strings"},
	sNodeGroupResources:           {"S-nodegroup-resources", DecidedByChart, nil, allReleases, "resources.cpu and resources.memory are quantities"},
	sNodeGroupGPUs:                {"S-nodegroup-gpus", DecidedByChart, ErrRequiredField, allReleases, `gpus[] are objects requiring a name ("" passes)`},
	sNodeGroupKubelet:             {"S-nodegroup-kubelet", DecidedByChart, nil, allReleases, "the kubelet reservations and eviction thresholds are strings"},
	sNodeGroupLogSerialConsole:    {"S-nodegroup-logserialconsole", DecidedByChart, nil, allReleases, "logSerialConsole is a boolean"},
	sNodeGroupMaxUnhealthy:        {"S-nodegroup-maxunhealthy", DecidedByChart, nil, allReleases, "a node group's maxUnhealthy is a string"},
	sNodeGroupNodeStartupTimeout:  {"S-nodegroup-nodestartuptimeout", DecidedByChart, nil, allReleases, "a node group's nodeStartupTimeout is a string"},
	sNodeGroupPodCPU:              {"S-nodegroup-podcpu", DecidedByChart, nil, allReleases, "podCpuLimit and podCpuRequest are quantities"},
	sAddonsRequired:               {"S-addons-required", DecidedByChart, nil, allReleases, "addons holds every addon of the release"},
	sAddonFields:                  {"S-addon-fields", DecidedByChart, nil, allReleases, "each addon has its enabled and/or valuesOverride, required; other keys are unknown"},
	sIngressExposeMethodEnum:      {"S-ingress-exposemethod-enum", DecidedByChart, ErrInvalidValue, allReleases, `ingressNginx.exposeMethod is Proxied or LoadBalancer; "" is not`},
	sIngressHosts:                 {"S-ingress-hosts", DecidedByChart, nil, allReleases, "ingressNginx.hosts is an array of strings"},
	rAddonsList:                   {"R-addons-list", DecidedByHelm, nil, allReleases, "the addon keys are the release's (fluxcd is one until main-2026-08-19)"},
	sControlPlaneRequired:         {"S-controlplane-required", DecidedByChart, nil, allReleases, "controlPlane and each component carry their required keys"},
	sControlPlaneReplicas:         {"S-controlplane-replicas", DecidedByChart, nil, allReleases, "controlPlane.replicas is an integer, no minimum"},
	sResourcesPresetEnum:          {"S-resourcespreset-enum", DecidedByChart, ErrInvalidValue, allReleases, `resourcesPreset is one of the 47 presets; "" is not`},
	sComponentResources:           {"S-component-resources", DecidedByChart, nil, allReleases, "a component's resources.cpu and resources.memory are quantities"},
	sAPIServerExtra:               {"S-apiserver-extra", DecidedByChart, nil, allReleases, "extraArgs is an array of strings, extraVolumes and extraVolumeMounts arrays of objects"},
	sTalos:                        {"S-talos", DecidedByChart, nil, allReleases, "talos carries its required strings and registryMirrors"},
	sTalosRegistryMirrors:         {"S-talos-registrymirrors", DecidedByChart, nil, allReleases, "talos.registryMirrors is an object stored verbatim"},
	sNodeHealthCheck:              {"S-nodehealthcheck", DecidedByChart, nil, allReleases, "nodeHealthCheck carries maxUnhealthy and nodeStartupTimeout, strings"},
	sOIDCModeEnum:                 {"S-oidc-mode-enum", DecidedByChart, ErrInvalidValue, allReleases, `oidc.mode is None, System or CustomConfig; "" is not`},
	sOIDCCustomConfig:             {"S-oidc-customconfig", DecidedByChart, nil, allReleases, "customConfig.config and customConfig.secretRef.name are strings"},
	sOIDCUsers:                    {"S-oidc-users", DecidedByChart, ErrInvalidValue, allReleases, "oidc.users[] require email and role; role is admin or view"},
	sNullNoDefault:                {"S-null-nodefault", DecidedByChart, nil, allReleases, "a null where values.yaml has no default reaches the schema as a wrong type"},
	sUnknownFieldsRelease:         {"S-unknown-fields-release", DecidedByChart, nil, []Release{Release20260821}, "what a release's schema does not list is an unknown field of that release"},
	tEphemeralStorageRemoved:      {"T-ephemeralstorage-removed", DecidedByChart, ErrFieldRemoved, allReleases, "a node group's ephemeralStorage is no longer supported"},
	tNodeGroupResourcesPair:       {"T-nodegroup-resources-pair", DecidedByChart, ErrNodeGroupResources, allReleases, "with an instanceType, resources.cpu and resources.memory are both set or neither"},
	tPodCPULimitInstanceType:      {"T-podcpu-limit-instancetype", DecidedByChart, ErrPodCPUInstanceType, allReleases, "podCpuLimit needs a node group sized by resources, not by instanceType"},
	tPodCPURequestInstanceType:    {"T-podcpu-request-instancetype", DecidedByChart, ErrPodCPUInstanceType, allReleases, "podCpuRequest needs a node group sized by resources, not by instanceType"},
	tPodCPULimitNegative:          {"T-podcpu-limit-negative", DecidedByChart, ErrPodCPUNegative, allReleases, "podCpuLimit is not negative"},
	tPodCPURequestNegative:        {"T-podcpu-request-negative", DecidedByChart, ErrPodCPUNegative, allReleases, "podCpuRequest is not negative"},
	tPodCPULimitZeroAlone:         {"T-podcpu-limit-zero-alone", DecidedByChart, ErrPodCPUZero, allReleases, "a zero podCpuLimit needs a zero podCpuRequest beside it"},
	tPodCPURequestZeroWithLimit:   {"T-podcpu-request-zero-with-limit", DecidedByChart, ErrPodCPUZero, allReleases, "a zero podCpuRequest beside a non-zero podCpuLimit reserves the whole limit"},
	tPodCPURequestAboveLimit:      {"T-podcpu-request-above-limit", DecidedByChart, ErrPodCPURequestAboveLimit, allReleases, "podCpuRequest does not exceed podCpuLimit"},
	tInstanceTypeLookup:           {"T-instancetype-lookup", DecidedByChart, ErrInstanceTypeNotFound, allReleases, "the instanceType of a group not sized by resources exists in the cluster"},
	tKubeletReservedFormat:        {"T-kubelet-reserved-format", DecidedByChart, ErrKubeletReservation, allReleases, "a kubelet reservation is a quantity of the chart's narrow form"},
	tKubeletReservedPositive:      {"T-kubelet-reserved-positive", DecidedByChart, ErrKubeletReservation, allReleases, "a kubelet reservation is positive"},
	tEvictionFormat:               {"T-eviction-format", DecidedByChart, ErrKubeletEviction, allReleases, "an absolute eviction threshold is a memory quantity"},
	tEvictionPercentNumber:        {"T-eviction-percent-number", DecidedByChart, ErrKubeletEviction, allReleases, "a percentage eviction threshold is a number"},
	tEvictionPercentRange:         {"T-eviction-percent-range", DecidedByChart, ErrKubeletEviction, allReleases, "a percentage eviction threshold is in (0, 100]"},
	tEvictionHardBelowSoft:        {"T-eviction-hard-below-soft", DecidedByChart, ErrKubeletEviction, allReleases, "evictionHardMemory is strictly below evictionSoftMemory"},
	tEvictionUnitMix:              {"T-eviction-unit-mix", DecidedByChart, ErrKubeletEviction, allReleases, "both eviction thresholds are percentages or both absolute (defaults count)"},
	tKubeletMemoryTotal:           {"T-kubelet-memory-total", DecidedByChart, ErrKubeletTotal, allReleases, "the memory reservations and the hard eviction threshold leave some of the node's memory"},
	tKubeletCPUTotal:              {"T-kubelet-cpu-total", DecidedByChart, ErrKubeletTotal, allReleases, "the CPU reservations leave some of the node's CPU"},
	tKubeletNeedsMemory:           {"T-kubelet-needs-memory", DecidedByChart, ErrKubeletNeedsSize, allReleases, "kubelet memory reservations need the node's memory (resources.memory or instanceType)"},
	tKubeletNeedsCPU:              {"T-kubelet-needs-cpu", DecidedByChart, ErrKubeletNeedsSize, allReleases, "kubelet CPU reservations need the node's CPU (resources.cpu or instanceType)"},
	tMaxUnhealthyFormat:           {"T-maxunhealthy-format", DecidedByChart, ErrMaxUnhealthy, allReleases, "the effective maxUnhealthy is a bare integer or an integer percentage"},
	tDurationPositive:             {"T-duration-positive", DecidedByChart, ErrDuration, allReleases, "readyUnknownTimeout, readyFalseTimeout and maxNodeProvisionTime are whole positive durations of s, m or h"},
	tNodeStartupTimeout:           {"T-nodestartuptimeout", DecidedByChart, nil, allReleases, "nodeStartupTimeout is rendered verbatim (Cluster API decides; out of scope)"},
	tSectionNull:                  {"T-section-null", DecidedByChart, ErrNullValue, allReleases, "a null top-level section: Helm deletes it and the templates dereference it"},
	tResourcesFlat:                {"T-resources-flat", DecidedByChart, ErrInvalidValue, allReleases, "a control-plane component's resources is flat, without requests or limits"},
	tVersionMap:                   {"T-version-map", DecidedByChart, ErrNullValue, allReleases, "version is a key of the chart's versions map (reached by version: null)"},
	tTalosSupportMatrix:           {"T-talos-support-matrix", DecidedByChart, nil, allReleases, "the Talos version supports the Kubernetes version (unreachable through the enum)"},
	tOIDCSystemPlatform:           {"T-oidc-system-platform", DecidedByChart, ErrOIDCPlatformDisabled, allReleases, "oidc.mode System needs the platform's OIDC"},
	tOIDCCustomConfigBoth:         {"T-oidc-customconfig-both", DecidedByChart, ErrOIDCCustomConfigConflict, allReleases, "CustomConfig sets customConfig.config or customConfig.secretRef.name, not both"},
	tOIDCCustomConfigNeither:      {"T-oidc-customconfig-neither", DecidedByChart, ErrOIDCCustomConfigMissing, allReleases, "CustomConfig sets customConfig.config or customConfig.secretRef.name"},
	tOIDCLegacyFlag:               {"T-oidc-legacy-flag", DecidedByChart, ErrLegacyOIDCFlag, allReleases, "with OIDC on, extraArgs hold no --oidc-* or --authentication-config flag"},
	tOIDCAuthnVolumeReserved:      {"T-oidc-authn-volume-reserved", DecidedByChart, ErrReservedVolume, allReleases, "with OIDC on, no extra volume is named authentication-config"},
	tExtraVolumeReservedName:      {"T-extravolume-reserved-name", DecidedByChart, ErrReservedVolume, allReleases, "no extra volume is named talos-ca or talos-tls-cert"},
	tExtraVolumeNameRequired:      {"T-extravolume-name-required", DecidedByChart, ErrVolumeName, allReleases, "every extra volume has a name"},
	tExtraVolumeDuplicate:         {"T-extravolume-duplicate", DecidedByChart, ErrDuplicateVolume, allReleases, "extra volume names are unique"},
	tExtraVolumeSourceAllowed:     {"T-extravolume-source-allowed", DecidedByChart, ErrVolumeSource, allReleases, "an extra volume's source is configMap or secret"},
	tExtraVolumeOneSource:         {"T-extravolume-one-source", DecidedByChart, ErrVolumeSource, allReleases, "an extra volume has exactly one source (every key besides name counts)"},
	tExtraVolumeMountNameRequired: {"T-extravolumemount-name-required", DecidedByChart, ErrVolumeName, allReleases, "every extra volume mount has a name"},
	tExtraVolumeMountUndeclared:   {"T-extravolumemount-undeclared", DecidedByChart, ErrUndeclaredVolumeMount, allReleases, "an extra volume mount names a declared extra volume"},
	tHAMiGPUOperator:              {"T-hami-gpuoperator", DecidedByChart, ErrHAMiRequiresGPUOperator, allReleases, "addons.hami needs addons.gpuOperator"},
	tOuroborosIngress:             {"T-ouroboros-ingress", DecidedByChart, ErrOuroborosRequiresIngress, allReleases, "addons.ouroboros needs addons.ingressNginx"},
	tOuroborosGatewayAPI:          {"T-ouroboros-gatewayapi", DecidedByChart, ErrOuroborosGatewayAPI, allReleases, "ouroboros's gatewayApi override needs addons.gatewayAPI, even with ouroboros off"},
	hReleaseName53:                {"H-release-name-53", DecidedByHelm, ref.ErrInvalidName, allReleases, "the release name kubernetes-<name> is at most 53 characters"},
	hReleaseNameFormat:            {"H-release-name-format", DecidedByHelm, ref.ErrInvalidName, allReleases, "the release name matches Helm's name pattern"},
	hOracleHelm4:                  {"H-oracle-helm4", DecidedByHelm, nil, allReleases, "a generated case's verdict is what Helm v4.3.2 decided rendering the chart"},
	hValuesYAML:                   {"H-values-yaml", DecidedByHelm, nil, allReleases, "Helm reads values with sigs.k8s.io/yaml: a key set twice keeps its last value"},
	aNameLength:                   {"A-name-length", DecidedByAPI, ref.ErrInvalidName, allReleases, `len("kubernetes-") + len(name) is at most 53`},
	aNameDNS1035:                  {"A-name-dns1035", DecidedByAPI, ref.ErrInvalidName, allReleases, "the name is a DNS-1035 label"},
	aNameLegacyCap:                {"A-name-legacy-cap", DecidedByAPI, nil, allReleases, "names capped at 32 where the definition declares no name schema (branch-dependent, not asserted)"},
	aInternalKeys:                 {"A-internal-keys", DecidedByAPI, ErrReservedKey, allReleases, `no top-level values key starts with "_"`},
	aVerdict:                      {"A-verdict", DecidedByAPI, nil, allReleases, "cozystack-api's refusals are reported apart from the chart's"},
	aNullNormalize:                {"A-null-normalize", DecidedByAPI, nil, allReleases, "newer cozystack-api restores a null required key's default (not asserted)"},
	rAuthnCustom:                  {"R-authn-custom", DecidedByHelm, nil, allReleases, "an inline CustomConfig is written verbatim, whatever its apiVersion"},
	kUnknownField:                 {"K-unknown-field", DecidedByTenantkit, ErrUnknownField, allReleases, "a field the model (or the release's chart) does not know: warned of, kept and written back"},
	kMinReplicasNegative:          {"K-minreplicas-negative", DecidedByTenantkit, ErrMinReplicasNegative, allReleases, "a negative minReplicas (warning)"},
	kMaxReplicasBelowMin:          {"K-maxreplicas-below-min", DecidedByTenantkit, ErrMaxReplicasBelowMin, allReleases, "maxReplicas below minReplicas (warning)"},
	kGPUNameEmpty:                 {"K-gpu-name-empty", DecidedByTenantkit, ErrEmptyName, allReleases, "an empty GPU name (warning)"},
	kOIDCEmailEmpty:               {"K-oidc-email-empty", DecidedByTenantkit, ErrEmptyName, allReleases, "an empty OIDC user email: the apiserver refuses the binding (error)"},
	kResourcesPair:                {"K-resources-pair", DecidedByTenantkit, ErrNodeGroupResources, allReleases, "only one of resources.cpu and resources.memory without an instanceType (warning)"},
	kNodeGroupUnsized:             {"K-nodegroup-unsized", DecidedByTenantkit, ErrNodeGroupUnsized, allReleases, "a node group with neither an instanceType nor resources (warning)"},
	kEmptyAsDefault:               {"K-empty-as-default", DecidedByTenantkit, nil, allReleases, `a present "" is refused where only an absent key means the default`},
	kAuthnVersion:                 {"K-authn-version", DecidedByTenantkit, ErrCustomConfigVersion, allReleases, "an inline customConfig whose apiVersion the cluster's kube-apiserver does not load (error)"},
	kCustomConfigParse:            {"K-customconfig-parse", DecidedByTenantkit, ErrCustomConfigUnreadable, allReleases, "an inline customConfig that is not an AuthenticationConfiguration (error)"},
	kDuplicateKey:                 {"K-duplicate-key", DecidedByTenantkit, ErrDuplicateField, allReleases, "a key set twice in the document (warning; the last value counts)"},
	kIntegerRange:                 {"K-integer-range", DecidedByTenantkit, ErrIntegerRange, allReleases, "a whole number beyond int64 where the model has an integer (error)"},
	kOIDCEmailDuplicate:           {"K-oidc-email-duplicate", DecidedByTenantkit, ErrDuplicateUser, allReleases, "an OIDC user email listed twice (warning; the last entry's role wins)"},
}

// ruleIDs indexes ruleTable by ID, for the rules the model's chart struct
// tags name.
var ruleIDs = func() map[string]ruleID {
	m := make(map[string]ruleID, len(ruleTable))
	for i, r := range ruleTable {
		m[r.id] = ruleID(i)
	}
	return m
}()

// ruleByID returns the rule of a chart struct tag; an ID the table does
// not declare is a bug of the model (TestRuleTable_tags).
func ruleByID(id string) ruleID {
	r, ok := ruleIDs[id]
	if !ok {
		panic(fmt.Sprintf("tenant: chart tag names undeclared rule %q", id))
	}
	return r
}

// deciderOf returns who decides the rule with ID id: the table's decider,
// or for an ID the table does not declare, the one its prefix names
// ("S-" and "T-" the chart, "A-" cozystack-api, "K-" tenantkit, else Helm).
func deciderOf(id string) Decider {
	if r, ok := ruleIDs[id]; ok {
		return ruleTable[r].by
	}
	switch {
	case strings.HasPrefix(id, "S-"), strings.HasPrefix(id, "T-"):
		return DecidedByChart
	case strings.HasPrefix(id, "A-"):
		return DecidedByAPI
	case strings.HasPrefix(id, "K-"):
		return DecidedByTenantkit
	}
	return DecidedByHelm
}

// problem returns the problem of rule r at field, wrapping its sentinel.
func problem(field string, r ruleID, detail string) *FieldError {
	return &FieldError{Field: field, Err: ruleTable[r].err, Rule: ruleTable[r].id, Detail: detail}
}

// problems collects field errors; err returns nil or a *ValidationError.
type problems []*FieldError

// add records a problem of rule r, wrapping the rule's sentinel.
func (p *problems) add(field string, r ruleID, detail string) {
	*p = append(*p, problem(field, r, detail))
}

// addAs records a problem of rule r that wraps err instead of the rule's
// sentinel: a document's missing key (ErrRequiredField) or null
// (ErrNullValue), whichever rule the model's chart tag names.
func (p *problems) addAs(field string, r ruleID, err error, detail string) {
	*p = append(*p, &FieldError{Field: field, Err: err, Rule: ruleTable[r].id, Detail: detail})
}

// addFE records a ready problem.
func (p *problems) addFE(fe *FieldError) {
	if fe != nil {
		*p = append(*p, fe)
	}
}

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return &ValidationError{Errors: p}
}
