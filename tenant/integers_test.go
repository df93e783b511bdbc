package tenant_test

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// integerLiterals are the numbers drawn for integer fields: small values,
// the int64 edges and just past them, 2^64, exponent and decimal forms of
// whole numbers, and fractions.
var integerLiterals = []string{
	"0", "1", "3", "-1", "9223372036854775807", "-9223372036854775808",
	"9223372036854775808", "-9223372036854775809", "18446744073709551616", "99999999999999999999999",
	"1e1", "1e18", "1e19", "1e20", "1e21", "-1e19", "2.0", "2.5", "-0.5", "1.5e1",
}

// literalClass is what a number written as lit is, decided apart from
// tenantkit: an integer literal by exact arithmetic, a decimal or
// exponent form as the float64 the YAML library (and Helm) reads.
func literalClass(lit string) (whole, fits bool, value int64) {
	if n, ok := new(big.Int).SetString(lit, 10); ok {
		return true, n.IsInt64(), n.Int64()
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || f != math.Trunc(f) {
		return false, false, 0
	}
	if f >= -(1<<63) && f < 1<<63 {
		return true, true, int64(f)
	}
	return true, false, 0
}

// TestIntegerRanges_generated draws documents that set minReplicas,
// maxReplicas and controlPlane.replicas to numbers of every range, in YAML
// and in JSON, and requires ParseSpec to read a whole number that fits
// int64 as that number, to refuse one beyond it as K-integer-range (a
// tenantkit decision) at exactly that field, and a fraction as malformed
// (the schema's S-type); and, where it parses, NewKubernetes(c,
// spec).Check to answer as spec.Check does.
func TestIntegerRanges_generated(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 63))
	counts := map[string]int{}
	for i := range 600 {
		lits := map[string]string{}
		for _, f := range []string{"min", "max", "cp"} {
			lits[f] = integerLiterals[rng.IntN(len(integerLiterals))]
		}
		doc := fmt.Sprintf("controlPlane: {replicas: %s}\nnodeGroups:\n  md0: {minReplicas: %s, maxReplicas: %s, instanceType: u1.medium, diskSize: 20Gi}\n",
			lits["cp"], lits["min"], lits["max"])
		if i%2 == 1 {
			doc = fmt.Sprintf(`{"controlPlane": {"replicas": %s}, "nodeGroups": {"md0": {"minReplicas": %s, "maxReplicas": %s, "instanceType": "u1.medium", "diskSize": "20Gi"}}}`,
				lits["cp"], lits["min"], lits["max"])
		}
		fields := map[string]string{"min": "spec.nodeGroups.md0.minReplicas", "max": "spec.nodeGroups.md0.maxReplicas", "cp": "spec.controlPlane.replicas"}
		var wantRange []string
		fraction := false
		for f, lit := range lits {
			whole, fits, _ := literalClass(lit)
			fraction = fraction || !whole
			if whole && !fits {
				wantRange = append(wantRange, fields[f])
			}
		}
		spec, err := tenant.ParseSpec([]byte(doc))
		switch {
		case fraction:
			counts["fraction"]++
			require.ErrorIs(t, err, tenant.ErrMalformed, doc)
		case len(wantRange) > 0:
			counts["beyond int64"]++
			var ve *tenant.ValidationError
			require.ErrorAs(t, err, &ve, doc)
			var got []string
			for _, fe := range ve.Errors {
				require.ErrorIs(t, fe, tenant.ErrIntegerRange, doc)
				require.Equal(t, tenant.DecidedByTenantkit, fe.Decider())
				got = append(got, fe.Field)
			}
			require.ElementsMatch(t, wantRange, got, doc)
		default:
			counts["fits"]++
			require.NoError(t, err, doc)
			md0 := spec.NodeGroups["md0"]
			for f, p := range map[string]*int{"min": &md0.MinReplicas, "max": md0.MaxReplicas, "cp": spec.ControlPlane.Replicas} {
				_, _, v := literalClass(lits[f])
				require.Equal(t, int(v), *p, "%s in %s", f, doc)
			}
			p := tenant.Platform{InstanceTypes: tenant.DefaultInstanceTypes()}
			w1, err1 := spec.Check(p)
			w2, err2 := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, spec).Check(p)
			require.Equal(t, w1.Rules(), w2.Rules(), doc)
			require.Equal(t, fmt.Sprint(err1), fmt.Sprint(err2), doc)
		}
		if err != nil && !errors.Is(err, tenant.ErrMalformed) {
			require.NotContains(t, err.Error(), "cannot unmarshal", doc)
		}
	}
	t.Logf("documents by class: %v", counts)
	for _, class := range []string{"fraction", "beyond int64", "fits"} {
		require.NotZero(t, counts[class], class)
	}
}
