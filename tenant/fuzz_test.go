package tenant_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
	"github.com/cozystack/tenantkit/tenant/tenanttest"
)

// FuzzParseKubernetes checks that any input either decodes or fails with
// one of the package's errors, that a decoded object encodes to a fixed
// point that passes the document checks again (nothing is lost or
// invented by a round trip), and that Check never panics.
func FuzzParseKubernetes(f *testing.F) {
	for _, spec := range []tenant.KubernetesSpec{{}, tenanttest.FullSpec(), tenant.KubernetesSpec{}.WithDefaults()} {
		out, err := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, spec).YAML()
		require.NoError(f, err)
		f.Add(out)
	}
	for _, seed := range []string{
		"spec: {version: v1.35, nodeGroups: {md0: {resources: {cpu: 2}}}}",
		"spec: {oidc: {mode: CustomConfig, customConfig: {config: x, secretRef: {name: y}}}}",
		"spec: {controlPlane: {apiServer: {extraVolumes: [{name: a, hostPath: {path: /}}], extraVolumeMounts: [{name: b}]}}}",
		`{"spec": {"addons": {"hami": {"enabled": true, "valuesOverride": {"hami": {"x": 1e400}}}}}}`,
		"spec: {host: a, host: b}",
		"metadata: {name: [}",
		"status: {anything: [1, 2, {x: y}]}",
		"spec: {nodeGroups: {md0: {diskSize: 1e3Ki, maxReplicas: -1}}}",
		"spec: {nodeGroups: {md0: {minReplicas: 0, maxReplicas: 1, instanceType: '', diskSize: 1Gi, resources: {cpu: 0, memory: 1Gi}, kubelet: {evictionHardMemory: 1e3Mi, systemReservedCpu: 0.0001}}}}",
		"spec: {version: null, oidc: {mode: ''}, _x: 1, nodeHealthCheck: {maxUnhealthy: '1%%'}}",
		"spec: {talos: {registryMirrors: {docker.io: x, ghcr.io: [1], q: {endpoints: [a], tls: 1}}}, controlPlane: {apiServer: {extraVolumes: [{name: a, secret: null}]}}}",
		"g: &g {minReplicas: 0}\nspec:\n  nodeGroups:\n    md0:\n      <<: *g\n      minReplicas: 1\n      minReplicas: 2\n",
		"spec: {addons: null, nodeGroups: {md0: {gpus: null, resources: {memory: null}}}, controlPlane: {scheduler: {resources: {limits: {cpu: 1}}}}}",
		"- a\n- b\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := tenant.ParseKubernetes(data)
		if err != nil {
			var ve *tenant.ValidationError
			if !errors.Is(err, tenant.ErrMalformed) && !errors.As(err, &ve) {
				t.Fatalf("error is none of the package's decode errors: %v", err)
			}
			return
		}
		_, _ = k.Check(tenant.Platform{OIDCEnabled: true})
		_ = checkErr(k.Spec.WithDefaults().Check(tenant.Platform{}))
		first, err := k.YAML()
		if err != nil {
			t.Fatalf("decoded object does not encode: %v", err)
		}
		back, err := tenant.ParseKubernetes(first)
		if err != nil {
			t.Fatalf("encoded object does not decode: %v\n%s", err, first)
		}
		second, err := back.YAML()
		if err != nil {
			t.Fatal(err)
		}
		if string(first) != string(second) {
			t.Fatalf("round trip changed the object:\n--- first\n%s\n--- second\n%s", first, second)
		}
	})
}

// FuzzParseSpec runs the values decoder alone, as used on Helm values
// files.
func FuzzParseSpec(f *testing.F) {
	out, err := tenanttest.FullSpec().YAML()
	require.NoError(f, err)
	f.Add(out)
	f.Add([]byte("nodeGroups: {}\naddons: {velero: {enabled: true}}\n"))
	f.Add([]byte("oidc: {users: [{email: a@b, role: admin}, {email: c@d}]}"))
	f.Add([]byte("host: a\nhost: b\naddons: {fluxcd: {enabled: null}}\n"))
	f.Add([]byte("controlPlane: {replicas: 1e20}\nnodeGroups: {md0: {maxReplicas: 9223372036854775808}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := tenant.ParseSpec(data)
		if err != nil {
			var ve *tenant.ValidationError
			if !errors.Is(err, tenant.ErrMalformed) && !errors.As(err, &ve) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			return
		}
		w, cerr := s.Check(tenant.Platform{})
		kw, kerr := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, s).Check(tenant.Platform{})
		if fmt.Sprint(w.Rules(), cerr) != fmt.Sprint(kw.Rules(), kerr) {
			t.Fatalf("spec.Check: %v %v; NewKubernetes(c, spec).Check: %v %v", w.Rules(), cerr, kw.Rules(), kerr)
		}
		first, err := s.YAML()
		if err != nil {
			t.Fatal(err)
		}
		back, err := tenant.ParseSpec(first)
		if err != nil {
			t.Fatalf("encoded spec does not decode: %v\n%s", err, first)
		}
		second, _ := back.YAML()
		if string(first) != string(second) {
			t.Fatalf("round trip changed the spec:\n%s\n---\n%s", first, second)
		}
	})
}

// FuzzDecodeKubernetes runs the lenient decoder of API objects: any input
// decodes or fails with one of the package's errors, and a decoded object
// (unknown fields included) encodes to a fixed point that keeps every
// unknown field.
func FuzzDecodeKubernetes(f *testing.F) {
	f.Add([]byte(newerObject))
	out, err := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, tenanttest.FullSpec()).YAML()
	require.NoError(f, err)
	f.Add(out)
	for _, seed := range []string{
		"spec: {x: 1, nodeGroups: {md0: {y: [1, {z: 2}]}}}",
		"spec: {oidc: {users: [{email: a, q: 1}, {r: 2}, 3]}}",
		"spec: {controlPlane: {apiServer: {extraVolumes: [{name: a, s: {}}, {name: a, t: 1}]}}}",
		"spec: {addons: {hami: {enabled: true, valuesOverride: {hami: {x: 1e400}}}, y: null}}",
		"status: {x: 1}\nq: 2\n",
		"spec: {host: a, host: b}",
		"- a\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := tenant.DecodeKubernetes(data)
		if err != nil {
			if !errors.Is(err, tenant.ErrMalformed) && !errors.Is(err, tenant.ErrDuplicateField) && !errors.Is(err, tenant.ErrIntegerRange) {
				t.Fatalf("error is none of the package's decode errors: %v", err)
			}
			return
		}
		first, err := k.YAML()
		if err != nil {
			t.Fatalf("decoded object does not encode: %v", err)
		}
		back, err := tenant.DecodeKubernetes(first)
		if err != nil {
			t.Fatalf("encoded object does not decode: %v\n%s", err, first)
		}
		if a, b := k.UnknownFields(), back.UnknownFields(); !slices.Equal(a, b) {
			t.Fatalf("unknown fields changed: %v, then %v\n%s", a, b, first)
		}
		second, err := back.YAML()
		if err != nil {
			t.Fatal(err)
		}
		if string(first) != string(second) {
			t.Fatalf("round trip changed the object:\n--- first\n%s\n--- second\n%s", first, second)
		}
	})
}
