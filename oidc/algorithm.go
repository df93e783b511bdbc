package oidc

import "crypto"

// Algorithm is a JWS signature algorithm, as a token's alg header names it.
type Algorithm string

// The signature algorithms kube-apiserver accepts, and so does Verifier.
const (
	// RS256 is RSASSA-PKCS1-v1_5 with SHA-256.
	RS256 Algorithm = "RS256"
	// RS384 is RSASSA-PKCS1-v1_5 with SHA-384.
	RS384 Algorithm = "RS384"
	// RS512 is RSASSA-PKCS1-v1_5 with SHA-512.
	RS512 Algorithm = "RS512"
	// ES256 is ECDSA on P-256 with SHA-256.
	ES256 Algorithm = "ES256"
	// ES384 is ECDSA on P-384 with SHA-384.
	ES384 Algorithm = "ES384"
	// ES512 is ECDSA on P-521 with SHA-512.
	ES512 Algorithm = "ES512"
	// PS256 is RSASSA-PSS with SHA-256.
	PS256 Algorithm = "PS256"
	// PS384 is RSASSA-PSS with SHA-384.
	PS384 Algorithm = "PS384"
	// PS512 is RSASSA-PSS with SHA-512.
	PS512 Algorithm = "PS512"
)

// PublicKey is one of an issuer's public keys, given to a Verifier that
// fetches none (VerifierConfig.Keys).
type PublicKey struct {
	// ID is the key's kid; empty for a key without one, which tokens of
	// any kid are checked against.
	ID string
	// Key is an *rsa.PublicKey or *ecdsa.PublicKey.
	Key crypto.PublicKey
}
