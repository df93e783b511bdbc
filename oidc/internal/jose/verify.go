package jose

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

// Signature checks, as go-jose v2 makes them for kube-apiserver. A key's
// own alg and use are not consulted; RSA keys verify RS* and PS*, EC keys
// ES* (the signature must be r||s of the algorithm's size, whatever the
// key's curve); Ed25519, symmetric and private keys verify nothing the
// apiserver accepts.

func hashFor(alg string) crypto.Hash {
	switch alg[2:] {
	case "384":
		return crypto.SHA384
	case "512":
		return crypto.SHA512
	}
	return crypto.SHA256
}

// Digest hashes a signing input for alg (one of Algorithms).
func Digest(alg, input string) []byte {
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

// Verify checks a signature over the digest hashed with the key. ES256
// with a P-256 key goes through the key's table (p256.go). usable is
// false when the key cannot verify alg at all (problem says why): an RSA
// key Go's crypto/rsa refuses (under 1024 bits), a key of the other type,
// a symmetric, Ed25519 or private key.
func (key Key) Verify(alg string, hashed, sig []byte) (ok, usable bool, problem string) {
	family := alg[:2]
	switch k := key.Key.(type) {
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
		if alg == "ES256" && key.p256 != nil {
			return key.p256.verify(k, hashed, sig), true, ""
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
