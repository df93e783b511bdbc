// Package oidc gives each Cozystack tenant Kubernetes cluster its own OIDC
// audience: a token minted for cluster A is rejected by cluster B's
// apiserver, with one shared Keycloak realm or a bring-your-own issuer.
//
// It renders everything a cluster needs (the apiserver
// AuthenticationConfiguration, Keycloak client objects, the user's kubeconfig
// and RBAC bindings) and verifies tokens exactly as kube-apiserver does.
package oidc
