package oidc

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"math/big"
	"unsafe"
)

// Signature checks, as go-jose v2 makes them for kube-apiserver: every
// key whose kid is the token's (every key when the token has none) is
// tried in JWKS order until one verifies. A key's own alg and use are not
// consulted; RSA keys verify RS* and PS*, EC keys ES* (the signature must
// be r||s of the algorithm's size, whatever the key's curve); Ed25519,
// symmetric and private keys verify nothing the apiserver accepts.

// tryResult is the outcome of trying a token's signature with a key set.
type tryResult struct {
	ok         bool
	candidates int    // keys the token's kid selected
	usable     bool   // one of them could verify the algorithm
	problem    string // why the last unusable one could not
}

// try verifies t with the snapshot's keys.
func (s *keySnapshot) try(t *jws, hashed []byte) tryResult {
	var res tryResult
	for i := range s.keys {
		k := &s.keys[i]
		if t.kid != "" && k.kid != t.kid {
			continue
		}
		res.candidates++
		if !t.critOK {
			continue // go-jose refuses before verifying
		}
		ok, usable, problem := verifyWith(k.key, t.alg, hashed, t.sig)
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
func (r tryResult) err(t *jws) error {
	switch {
	case r.candidates == 0:
		return &UnknownKeyError{KeyID: t.kid}
	case !t.critOK:
		return &CriticalHeaderError{Names: t.critNames}
	case !r.usable:
		return &UnusableKeyError{KeyID: t.kid, Problem: r.problem}
	}
	return ErrInvalidSignature
}

func hashFor(alg string) crypto.Hash {
	switch alg[2:] {
	case "384":
		return crypto.SHA384
	case "512":
		return crypto.SHA512
	}
	return crypto.SHA256
}

// digestFor hashes the signing input for alg (one of jwsAlgorithms).
func digestFor(alg, input string) []byte {
	// A read-only view of the string: the Sum functions neither keep nor
	// write their input, and copying a token per call is measurable.
	data := unsafe.Slice(unsafe.StringData(input), len(input))
	switch hashFor(alg) {
	case crypto.SHA384:
		sum := sha512.Sum384(data)
		return sum[:]
	case crypto.SHA512:
		sum := sha512.Sum512(data)
		return sum[:]
	}
	sum := sha256.Sum256(data)
	return sum[:]
}

// verifyWith checks one signature with one key. usable is false when the
// key cannot verify alg at all (problem says why).
func verifyWith(key any, alg string, hashed, sig []byte) (ok, usable bool, problem string) {
	family := alg[:2]
	switch k := key.(type) {
	case *rsa.PublicKey:
		var err error
		switch family {
		case "RS":
			err = rsa.VerifyPKCS1v15(k, hashFor(alg), hashed, sig)
		case "PS":
			err = rsa.VerifyPSS(k, hashFor(alg), hashed, sig, nil)
		default:
			return false, false, "an RSA key cannot verify " + alg
		}
		if err == nil || errors.Is(err, rsa.ErrVerification) {
			return err == nil, true, ""
		}
		bits := 0
		if k.N != nil {
			bits = k.N.BitLen()
		}
		return false, false, fmt.Sprintf("RSA key of %d bits refused by Go's crypto/rsa (%s)", bits, err.Error())
	case *ecdsa.PublicKey:
		if family != "ES" {
			return false, false, "an EC key cannot verify " + alg
		}
		size := 32
		switch alg {
		case "ES384":
			size = 48
		case "ES512":
			size = 66
		}
		if len(sig) != 2*size {
			return false, true, ""
		}
		r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
		return ecdsa.Verify(k, hashed, r, s), true, ""
	case ed25519.PublicKey:
		return false, false, "an Ed25519 key cannot verify " + alg
	case []byte:
		return false, false, "a symmetric key cannot verify " + alg
	}
	return false, false, "a private key in the JWKS verifies nothing"
}
