package oidctest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"io"
	"math/big"
	"testing"

	"github.com/cozystack/tenantkit/oidc"
)

// GenerateWeakRSAKey generates an RS256 key of bits bits (for example
// 512), below the 1024 bits Go's crypto/rsa accepts, with a fresh key ID:
// the key an old or misconfigured IdP may still publish. Its signatures
// are PKCS #1 v1.5 computed without crypto/rsa, which refuses such keys.
func GenerateWeakRSAKey(bits int) (Key, error) {
	if bits < 256 || bits%16 != 0 {
		return Key{}, fmt.Errorf("oidctest: weak RSA key: %d bits; want a multiple of 16 from 256", bits)
	}
	e := big.NewInt(65537)
	for {
		p, err := rand.Prime(rand.Reader, bits/2)
		if err != nil {
			return Key{}, fmt.Errorf("oidctest: weak RSA key: %w", err)
		}
		q, err := rand.Prime(rand.Reader, bits/2)
		if err != nil {
			return Key{}, fmt.Errorf("oidctest: weak RSA key: %w", err)
		}
		n := new(big.Int).Mul(p, q)
		phi := new(big.Int).Mul(new(big.Int).Sub(p, big.NewInt(1)), new(big.Int).Sub(q, big.NewInt(1)))
		d := new(big.Int).ModInverse(e, phi)
		if p.Cmp(q) == 0 || n.BitLen() != bits || d == nil {
			continue
		}
		priv := &weakRSA{pub: rsa.PublicKey{N: n, E: int(e.Int64())}, d: d}
		return Key{ID: fmt.Sprintf("weak-RS256-%d", keySeq.Add(1)), Algorithm: oidc.RS256, Private: priv}, nil
	}
}

// weakRSA is an RSA private key crypto/rsa would refuse; it signs with
// textbook PKCS #1 v1.5.
type weakRSA struct {
	pub rsa.PublicKey
	d   *big.Int
}

func (k *weakRSA) Public() crypto.PublicKey { return &k.pub }

// digestInfo are the DER prefixes of PKCS #1 v1.5 (RFC 8017 9.2).
var digestInfo = map[crypto.Hash][]byte{
	crypto.SHA256: {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20},
	crypto.SHA384: {0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02, 0x05, 0x00, 0x04, 0x30},
	crypto.SHA512: {0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03, 0x05, 0x00, 0x04, 0x40},
}

func (k *weakRSA) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	prefix, ok := digestInfo[opts.HashFunc()]
	if !ok {
		return nil, fmt.Errorf("oidctest: weak RSA key: only PKCS #1 v1.5 with SHA-2")
	}
	size := (k.pub.N.BitLen() + 7) / 8
	t := append(append([]byte{}, prefix...), digest...)
	if len(t)+11 > size {
		return nil, fmt.Errorf("oidctest: weak RSA key: %d bits is too short for %s", k.pub.N.BitLen(), opts.HashFunc())
	}
	em := make([]byte, size)
	em[1] = 0x01
	for i := 2; i < size-len(t)-1; i++ {
		em[i] = 0xff
	}
	copy(em[size-len(t):], t)
	s := new(big.Int).Exp(new(big.Int).SetBytes(em), k.d, k.pub.N)
	return s.FillBytes(make([]byte, size)), nil
}

// GenerateWeakRSAKeyT is GenerateWeakRSAKey for tests: it fails the test
// on error.
func GenerateWeakRSAKeyT(t testing.TB, bits int) Key {
	t.Helper()
	k, err := GenerateWeakRSAKey(bits)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
