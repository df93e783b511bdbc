package oidc

import (
	"github.com/cozystack/tenantkit/oidc/internal/jose"
)

// Signature checks, as go-jose v2 makes them for kube-apiserver: every
// key whose kid is the token's (every key when the token has none) is
// tried in JWKS order until one verifies (jose.Key.Verify).

// tryResult is the outcome of trying a token's signature with a key set.
type tryResult struct {
	ok         bool
	candidates int    // keys the token's kid selected
	usable     bool   // one of them could verify the algorithm
	problem    string // why the last unusable one could not
}

// try verifies t with the snapshot's keys.
func (s *keySnapshot) try(t *jose.JWS, hashed []byte) tryResult {
	var res tryResult
	for i := range s.keys {
		k := &s.keys[i]
		if t.KeyID != "" && k.ID != t.KeyID {
			continue
		}
		res.candidates++
		if !t.CritOK {
			continue // go-jose refuses before verifying
		}
		ok, usable, problem := k.Verify(t.Alg, hashed, t.Signature)
		if ok {
			res.ok = true
			return res
		}
		if usable {
			res.usable = true
		} else {
			res.problem = problem
		}
	}
	return res
}

// err is the typed reason for a failed try.
func (r tryResult) err(t *jose.JWS) error {
	switch {
	case r.candidates == 0:
		return &UnknownKeyError{KeyID: t.KeyID}
	case !t.CritOK:
		return &CriticalHeaderError{Names: t.CritNames}
	case !r.usable:
		return &UnusableKeyError{KeyID: t.KeyID, Problem: r.problem}
	}
	return ErrInvalidSignature
}

// parseJWS reads the token's JOSE parts and turns the reader's errors into
// typed reasons.
func parseJWS(token string, payload []byte, headers *jose.HeaderCache) (*jose.JWS, error) {
	t, err := jose.Parse(token, payload, headers)
	if err != nil {
		switch e := err.(type) {
		case *jose.AlgorithmError:
			return nil, &AlgorithmError{Algorithm: e.Alg}
		case *jose.MalformedError:
			return nil, &MalformedTokenError{Reason: e.Reason}
		}
		return nil, &MalformedTokenError{Reason: "JWS"}
	}
	return t, nil
}
