package oidc

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// WhoAmI presents token to the kube-apiserver cfg points at (cfg's host and
// TLS trust; cfg's own credentials are dropped) and returns the user the
// apiserver authenticated, from a SelfSubjectReview, as `kubectl auth
// whoami` shows it. It is the apiserver's side of what Verifier decides: a
// token the apiserver refuses returns its error (apierrors.IsUnauthorized
// for a 401). An apiserver's JWT authenticator fetches the issuer's keys in
// the background after it starts, so a fresh apiserver may refuse a good
// token for a moment.
func WhoAmI(ctx context.Context, cfg *rest.Config, token string) (authenticationv1.UserInfo, error) {
	c := rest.AnonymousClientConfig(cfg)
	c.BearerToken = token
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	return r.Status.UserInfo, nil
}
