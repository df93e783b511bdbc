// Package apiserverauthn holds the tests that run package oidc's Verifier
// side by side with kube-apiserver's own JWT authenticator
// (k8s.io/apiserver/plugin/pkg/authenticator/token/oidc): the differential
// test over the bad-input corpus and generated tokens, and the benchmarks
// against it and against a bare go-oidc verifier.
//
// It is a separate module so that the library's go.mod does not carry the
// apiserver's go-oidc v2 and go-jose v2. `make test` and `make bench` run it.
package apiserverauthn
