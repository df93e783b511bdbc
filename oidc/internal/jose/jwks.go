package jose

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The JWKS decoder. kube-apiserver 1.37 reads the issuer's keys with
// go-oidc v2, which decodes {"keys": [...]} with encoding/json and each key
// with go-jose v2; this file decodes them the same way, entry for entry:
//
//   - a key's members are matched case-sensitively and a duplicate member
//     (at any level go-jose decodes) is an error;
//   - one entry that does not decode fails the whole set (an unknown kty,
//     an OKP curve other than Ed25519, an x5u string, a null entry ...);
//     ParseKeySet's skipInvalid drops such entries instead, as go-oidc v3
//     and RFC 7517 section 5 do;
//   - "alg" and "use" are kept but never consulted: a key published with
//     alg "RSA-OAEP", "rs256" or use "enc" verifies any token whose kid
//     names it (go-oidc v3 drops such keys; the apiserver does not);
//   - private and symmetric keys decode but never verify.
//
// oidc/internal/apiserverauthn fuzzes this decoder against go-jose v2.

// jsonProblem shortens a JSON error without echoing its input.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("syntax error at offset %d", syn.Offset)
	case errors.As(err, &typ):
		return "want " + typ.Type.String() + ", got " + typ.Value
	}
	return "invalid JSON"
}

// Key is one decoded JWKS entry.
type Key struct {
	// ID is the kid.
	ID string
	// Algorithm is the alg member, kept for messages and never consulted.
	Algorithm string
	// Key is *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey for
	// the keys that can verify; []byte (oct), *rsa.PrivateKey,
	// *ecdsa.PrivateKey or ed25519.PrivateKey for those that cannot.
	Key any

	p256 *p256Key // ES256 state of a P-256 public key, else nil
}

// ErrInvalidKeySet is what every *KeySetError unwraps to. Package oidc
// re-exports it as oidc.ErrInvalidKeySet, and the error type as
// oidc.KeySetError: this is their one definition.
var ErrInvalidKeySet = errors.New("oidc: invalid JWKS")

// KeySetError is a JWKS entry that kube-apiserver 1.37's decoder (go-jose
// v2) refuses, failing the whole set.
type KeySetError struct {
	// Index is the entry's position in "keys" (-1 when the document
	// itself is wrong).
	Index int
	// KeyID is the entry's kid, when it has a readable one.
	KeyID string
	// Problem says what is wrong, for example "unknown kty \"OKP\" curve
	// \"X25519\"".
	Problem string
}

func (e *KeySetError) Error() string {
	if e.Index < 0 {
		return "oidc: invalid JWKS: " + e.Problem
	}
	return fmt.Sprintf("oidc: invalid JWKS: key %d (kid %q): %s", e.Index, e.KeyID, e.Problem)
}

// Unwrap returns ErrInvalidKeySet.
func (e *KeySetError) Unwrap() error { return ErrInvalidKeySet }

// jwksDoc is the document as go-oidc v2 decodes it (encoding/json, so the
// "keys" member matches case-insensitively).
type jwksDoc struct {
	Keys []jwkEntry `json:"keys"`
}

// jwkEntry decodes one entry with go-jose v2's rules. With skip set, an
// entry that does not decode is dropped instead of failing the document.
type jwkEntry struct {
	Key
	skip    bool
	skipped bool
}

func (e *jwkEntry) UnmarshalJSON(raw []byte) error {
	k, err := DecodeKey(raw)
	if err != nil {
		if e.skip {
			e.skipped = true
			return nil
		}
		return &KeySetError{Index: -1, KeyID: peekKid(raw), Problem: err.Error()}
	}
	e.Key = k
	return nil
}

// ParseKeySet decodes a JWKS document as go-oidc v2 and go-jose v2 do.
// Without skipInvalid the first entry that does not decode fails the whole
// document with a *KeySetError; with it, such entries are dropped.
func ParseKeySet(body []byte, skipInvalid bool) ([]Key, error) {
	var doc jwksDoc
	if skipInvalid {
		var raw struct {
			Keys []json.RawMessage `json:"keys"`
		}
		if err := json.Unmarshal(body, &raw); err != nil {
			return nil, &KeySetError{Index: -1, Problem: jsonProblem(err)}
		}
		doc.Keys = make([]jwkEntry, len(raw.Keys))
		for i := range doc.Keys {
			doc.Keys[i].skip = true
			_ = doc.Keys[i].UnmarshalJSON(raw.Keys[i])
		}
	} else if err := json.Unmarshal(body, &doc); err != nil {
		var kse *KeySetError
		if errors.As(err, &kse) {
			kse.Index = indexOfEntry(body, kse.KeyID)
			return nil, kse
		}
		return nil, &KeySetError{Index: -1, Problem: jsonProblem(err)}
	}
	keys := make([]Key, 0, len(doc.Keys))
	for _, e := range doc.Keys {
		if !e.skipped {
			keys = append(keys, e.Key)
		}
	}
	return keys, nil
}

// indexOfEntry finds the failing entry for the error message: the first
// entry with kid (any entry when kid is empty) that does not decode.
func indexOfEntry(body []byte, kid string) int {
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if json.Unmarshal(body, &raw) != nil {
		return -1
	}
	for i, r := range raw.Keys {
		if _, err := DecodeKey(r); err != nil && peekKid(r) == kid {
			return i
		}
	}
	return -1
}

// peekKid returns an entry's kid for messages, "" when it has none.
func peekKid(raw []byte) string {
	var k struct {
		Kid string `json:"kid"`
	}
	_ = json.Unmarshal(raw, &k)
	return k.Kid
}
