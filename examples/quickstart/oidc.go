package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/oidc"
)

// oidc logs cluster A's admin in for A's audience, presents the token to
// both clusters (each apiserver decides, and oidc.Verifier says why), and
// binds the users of A's spec inside A.
func (w *world) oidc(ctx context.Context) (string, error) {
	a, b := w.clusters[0], w.clusters[1]
	step := w.step(fmt.Sprintf("logging %s in at the IdP for %s", a.user, a.Ref()))
	token, err := w.dex.PasswordToken(ctx, a.user, demoPassword, a.Ref().ClientID())
	if err == nil {
		err = waitAccepted(ctx, a, token) // the authenticator discovers the issuer in the background
	}
	step.Done(err)
	if err != nil {
		return "", err
	}
	var rows [][]string
	accepted := map[*tenantCluster]bool{}
	for _, tc := range []*tenantCluster{a, b} {
		user, apiErr := oidc.WhoAmI(ctx, tc.api.RESTConfig(), token) // what kube-apiserver decides
		_, vErr := tc.verifier.Verify(ctx, token)                    // what the library decides, and why
		says := "401 Unauthorized"
		if apiErr == nil {
			says = user.Username + " " + fmt.Sprint(user.Groups)
		} else if !apierrors.IsUnauthorized(apiErr) {
			return "", apiErr
		}
		if (apiErr == nil) != (vErr == nil) {
			return "", fmt.Errorf("%s: kube-apiserver and oidc.Verifier disagree (%v / %v)", tc.Ref(), apiErr, vErr)
		}
		accepted[tc] = apiErr == nil
		rows = append(rows, []string{tc.Ref().String(), says, reason(vErr)})
	}
	cli.Table(w.out, []string{"TOKEN OF " + a.user + " PRESENTED TO", "KUBE-APISERVER", "oidc.Verifier"}, rows)
	if !accepted[a] || accepted[b] {
		return "", fmt.Errorf("isolation does not hold: accepted by A %v, by B %v", accepted[a], accepted[b])
	}

	plan, err := a.SyncOIDCUsers(ctx) // spec.oidc.users become ClusterRoleBindings in A
	if err != nil {
		return "", err
	}
	fmt.Fprintf(w.out, "\nRBAC in %s from spec.oidc.users:\n%s\n", a.Ref(), strings.TrimRight(plan.String(), "\n"))
	return fmt.Sprintf("%s accepted by %s, rejected by %s (audience); RBAC of the spec applied", a.user, a.Ref(), b.Ref()), nil
}

// waitAccepted waits until the cluster's apiserver accepts token: its JWT
// authenticator fetches the issuer's keys after it starts.
func waitAccepted(ctx context.Context, tc *tenantCluster, token string) error {
	for {
		_, err := oidc.WhoAmI(ctx, tc.api.RESTConfig(), token)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s never accepted the token: %w (last: %v)", tc.Ref(), ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// reason says in a few words why a Verifier refused a token.
func reason(err error) string {
	var aud *oidc.AudienceError
	var rule *oidc.RuleError
	switch {
	case err == nil:
		return "accepted"
	case errors.As(err, &aud):
		return fmt.Sprintf("audience %v, want %v", aud.Got, aud.Want)
	case errors.As(err, &rule):
		return "not in the tenant's groups"
	}
	return err.Error()
}
