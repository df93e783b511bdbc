package tenant_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
	"github.com/cozystack/tenantkit/tenant/tenanttest"
)

// BenchmarkParseKubernetes compares the strict typed decoder with the
// baseline every caller pays anyway: YAML into an untyped map.
func BenchmarkParseKubernetes(b *testing.B) {
	doc, err := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, tenanttest.FullSpec()).YAML()
	require.NoError(b, err)
	b.Run("baseline", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			var m map[string]any
			if err := yaml.Unmarshal(doc, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ParseKubernetes", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if _, err := tenant.ParseKubernetes(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("DecodeKubernetes", func(b *testing.B) { // lenient, as API reads decode
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if _, err := tenant.DecodeKubernetes(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	newer := []byte(newerObject)
	b.Run("DecodeKubernetes/unknown-fields", func(b *testing.B) {
		b.SetBytes(int64(len(newer)))
		for b.Loop() {
			if _, err := tenant.DecodeKubernetes(newer); err != nil {
				b.Fatal(err)
			}
		}
	})
	k, err := tenant.ParseKubernetes(doc)
	require.NoError(b, err)
	b.Run("Validate", func(b *testing.B) {
		for b.Loop() {
			if err := checkErr(k.Check(tenant.Platform{OIDCEnabled: true})); err != nil {
				b.Fatal(err)
			}
		}
	})
}
