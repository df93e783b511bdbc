package apiserverauthn_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/oidc/oidctest"
)

// BenchmarkVerify runs, in one process and on the same token and
// configuration (the one Cozystack renders: email, groups, the tenant
// groups CEL gate):
//
//   - baseline: go-oidc v3 alone (signature, issuer, audience, expiry), the
//     cost floor of any verifier built on it;
//   - apiserver: kube-apiserver's JWT authenticator (k8s.io/apiserver
//     v0.37.2), the behaviour we reproduce;
//   - tenantkit: oidc.Verifier.
//
// Ratios to report: tenantkit/baseline (target ≤ 1.15) and
// apiserver/tenantkit (throughput ratio, target ≥ 1.0).
func BenchmarkVerify(b *testing.B) {
	for _, alg := range []string{"RS256", "ES256"} {
		b.Run(alg, func(b *testing.B) {
			iss := oidctest.NewIssuer(b, oidctest.Config{Algorithm: joseAlg(alg)})
			jwt := oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM())
			token := iss.Sign(b, iss.Claims(acme.ClientID(), "alice@example.org", "tenant-acme-admin", "devs"))
			ctx := context.Background()

			base := newGoOIDCVerifier(b, iss, acme.ClientID())
			theirs := newAPIServerAuthenticator(b, iss, jwt)
			ours := newVerifier(b, iss, jwt)
			// Warm every key cache outside the timed loops.
			if _, err := base.Verify(ctx, token); err != nil {
				b.Fatal(err)
			}
			if _, ok, err := theirs.AuthenticateToken(ctx, token); !ok || err != nil {
				b.Fatal(ok, err)
			}
			if _, err := ours.Verify(ctx, token); err != nil {
				b.Fatal(err)
			}

			b.Run("baseline", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := base.Verify(ctx, token); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("apiserver", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, ok, err := theirs.AuthenticateToken(ctx, token); !ok || err != nil {
						b.Fatal(ok, err)
					}
				}
			})
			b.Run("tenantkit", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := ours.Verify(ctx, token); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkVerifyRatio measures the same three verifiers interleaved: each
// iteration times a small batch of each, in rotating order, and the ratios
// reported are medians of the per-iteration ratios. On a shared, noisy
// machine this is steadier than comparing BenchmarkVerify's separate runs.
//
//	tenantkit/baseline     cost relative to go-oidc alone (target ≤ 1.15)
//	apiserver/tenantkit    throughput relative to the apiserver (target ≥ 1.0)
//	tenantkit-cel/baseline the same with the tenant gate run by the CEL
//	                       interpreter instead of its native fast path
func BenchmarkVerifyRatio(b *testing.B) {
	for _, alg := range []string{"RS256", "ES256"} {
		b.Run(alg, func(b *testing.B) {
			iss := oidctest.NewIssuer(b, oidctest.Config{Algorithm: joseAlg(alg)})
			jwt := oidc.JWTAuthenticator(acme, iss.URL(), iss.CAPEM())
			token := iss.Sign(b, iss.Claims(acme.ClientID(), "alice@example.org", "tenant-acme-admin", "devs"))
			ctx := context.Background()
			base := newGoOIDCVerifier(b, iss, acme.ClientID())
			theirs := newAPIServerAuthenticator(b, iss, jwt)
			ours := newVerifier(b, iss, jwt)
			celJWT := jwt
			celJWT.ClaimValidationRules = slices.Clone(jwt.ClaimValidationRules)
			celJWT.ClaimValidationRules[0].Expression = "(" + jwt.ClaimValidationRules[0].Expression + ") == true"
			oursCEL := newVerifier(b, iss, celJWT)
			impls := []func() error{
				func() error { _, err := base.Verify(ctx, token); return err },
				func() error {
					_, ok, err := theirs.AuthenticateToken(ctx, token)
					if !ok && err == nil {
						err = errors.New("not authenticated")
					}
					return err
				},
				func() error { _, err := ours.Verify(ctx, token); return err },
				func() error { _, err := oursCEL.Verify(ctx, token); return err },
			}
			for _, f := range impls { // warm the key caches
				if err := f(); err != nil {
					b.Fatal(err)
				}
			}
			const batch = 8
			var oursOverBase, theirsOverOurs, celOverBase []float64
			round := 0
			for b.Loop() {
				var took [4]time.Duration
				for k := range impls {
					i := (k + round) % len(impls)
					start := time.Now()
					for range batch {
						if err := impls[i](); err != nil {
							b.Fatal(err)
						}
					}
					took[i] = time.Since(start)
				}
				round++
				oursOverBase = append(oursOverBase, float64(took[2])/float64(took[0]))
				theirsOverOurs = append(theirsOverOurs, float64(took[1])/float64(took[2]))
				celOverBase = append(celOverBase, float64(took[3])/float64(took[0]))
			}
			b.ReportMetric(median(oursOverBase), "tenantkit/baseline")
			b.ReportMetric(median(theirsOverOurs), "apiserver/tenantkit")
			b.ReportMetric(median(celOverBase), "tenantkit-cel/baseline")
		})
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
