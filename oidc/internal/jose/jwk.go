package jose

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"reflect"
)

// One JWKS entry, decoded as go-jose v2's JSONWebKey.UnmarshalJSON does.

// rawJWK is a JWK's members as go-jose v2 reads them. A byte field is nil
// when absent or null and non-nil (maybe empty) when present.
type rawJWK struct {
	use, kty, kid, crv, alg              string
	k, x, y, n, e, d, p, q, dp, dq, qi   []byte
	x5c                                  []string
	x5t, x5tS256                         string
	hasK, hasX, hasY, hasN, hasE, hasD   bool
	hasP, hasQ, hasDp, hasDq, hasQi, x5u bool
}

// DecodeKey decodes one JWKS entry as go-jose v2's
// JSONWebKey.UnmarshalJSON does.
func DecodeKey(raw []byte) (Key, error) {
	var r rawJWK
	if err := r.decode(raw); err != nil {
		return Key{}, err
	}
	certs, err := parseCertChain(r.x5c)
	if err != nil {
		return Key{}, fmt.Errorf("x5c: %w", err)
	}
	key, pub, err := r.key()
	if err != nil {
		return Key{}, err
	}
	if len(certs) > 0 && pub != nil && !reflect.DeepEqual(certs[0].PublicKey, pub) {
		return Key{}, errors.New("the x5c certificate holds another key")
	}
	if err := r.checkThumbprints(certs); err != nil {
		return Key{}, err
	}
	k := Key{ID: r.kid, Algorithm: r.alg, Key: key}
	if pub, ok := key.(*ecdsa.PublicKey); ok {
		k.p256 = newP256Key(pub)
	}
	return k, nil
}

// decode reads the members: strings, base64url byte strings, x5c and x5u.
func (r *rawJWK) decode(raw []byte) error {
	if isNull(raw) {
		return nil // go-jose decodes null to an empty key: "unknown kty"
	}
	return forkObject(raw, func(name string, v []byte) error {
		switch name {
		case "use":
			return forkString(v, &r.use)
		case "kty":
			return forkString(v, &r.kty)
		case "kid":
			return forkString(v, &r.kid)
		case "crv":
			return forkString(v, &r.crv)
		case "alg":
			return forkString(v, &r.alg)
		case "x5t":
			return forkString(v, &r.x5t)
		case "x5t#S256":
			return forkString(v, &r.x5tS256)
		case "x5c":
			return forkStrings(v, &r.x5c)
		case "x5u":
			r.x5u = !isNull(v)
			return forkURL(v)
		}
		if dst, has := r.bytesField(name); dst != nil {
			if isNull(v) {
				return nil
			}
			*has = true
			return forkBase64(v, dst)
		}
		return nil
	})
}

func (r *rawJWK) bytesField(name string) (*[]byte, *bool) {
	switch name {
	case "k":
		return &r.k, &r.hasK
	case "x":
		return &r.x, &r.hasX
	case "y":
		return &r.y, &r.hasY
	case "n":
		return &r.n, &r.hasN
	case "e":
		return &r.e, &r.hasE
	case "d":
		return &r.d, &r.hasD
	case "p":
		return &r.p, &r.hasP
	case "q":
		return &r.q, &r.hasQ
	case "dp":
		return &r.dp, &r.hasDp
	case "dq":
		return &r.dq, &r.hasDq
	case "qi":
		return &r.qi, &r.hasQi
	}
	return nil, nil
}

// key builds the key by kty; pub is its public half, for the x5c check.
func (r *rawJWK) key() (key, pub any, err error) {
	switch r.kty {
	case "EC":
		if r.hasD {
			k, err := r.ecPrivate()
			if err != nil {
				return nil, nil, err
			}
			return k, k.Public(), nil
		}
		k, err := r.ecPublic()
		if err != nil {
			return nil, nil, err
		}
		return k, k, nil
	case "RSA":
		if r.hasD {
			k, err := r.rsaPrivate()
			if err != nil {
				return nil, nil, err
			}
			return k, k.Public(), nil
		}
		if !r.hasN || !r.hasE {
			return nil, nil, errors.New("RSA key without n or e")
		}
		k := &rsa.PublicKey{N: new(big.Int).SetBytes(r.n), E: int(new(big.Int).SetBytes(r.e).Int64())}
		return k, k, nil
	case "oct":
		if len(r.x5c) > 0 {
			return nil, nil, errors.New("symmetric key with a certificate chain")
		}
		if !r.hasK {
			return nil, nil, errors.New("symmetric key without k")
		}
		return r.k, nil, nil
	case "OKP":
		if r.crv != "Ed25519" || !r.hasX {
			return nil, nil, fmt.Errorf("OKP key on curve %q; only Ed25519 is understood", r.crv)
		}
		pubKey := make(ed25519.PublicKey, ed25519.PublicKeySize)
		copy(pubKey, r.x)
		if r.hasD {
			priv := make(ed25519.PrivateKey, ed25519.PrivateKeySize)
			copy(priv[:32], r.d)
			copy(priv[32:], r.x)
			return priv, priv.Public(), nil
		}
		return pubKey, pubKey, nil
	}
	return nil, nil, fmt.Errorf("unknown kty %q", r.kty)
}

func (r *rawJWK) curve() (elliptic.Curve, error) {
	switch r.crv {
	case "P-256":
		return elliptic.P256(), nil
	case "P-384":
		return elliptic.P384(), nil
	case "P-521":
		return elliptic.P521(), nil
	}
	return nil, fmt.Errorf("EC key on unsupported curve %q", r.crv)
}

func (r *rawJWK) ecPublic() (*ecdsa.PublicKey, error) {
	c, err := r.curve()
	if err != nil {
		return nil, err
	}
	if !r.hasX || !r.hasY {
		return nil, errors.New("EC key without x or y")
	}
	size := (c.Params().BitSize + 7) / 8
	if len(r.x) != size || len(r.y) != size {
		return nil, fmt.Errorf("EC key coordinates of %d and %d bytes; want %d", len(r.x), len(r.y), size)
	}
	x, y := new(big.Int).SetBytes(r.x), new(big.Int).SetBytes(r.y)
	// The deprecated low-level calls are go-jose v2's: the key must be
	// built as it builds it, for the x5c comparison (reflect.DeepEqual).
	//lint:ignore SA1019 mirrors go-jose v2's decoding
	if !c.IsOnCurve(x, y) {
		return nil, errors.New("EC key not on its curve")
	}
	//lint:ignore SA1019 mirrors go-jose v2's decoding
	return &ecdsa.PublicKey{Curve: c, X: x, Y: y}, nil
}

func (r *rawJWK) ecPrivate() (*ecdsa.PrivateKey, error) {
	c, err := r.curve()
	if err != nil {
		return nil, err
	}
	if !r.hasX || !r.hasY || !r.hasD {
		return nil, errors.New("EC private key without x, y or d")
	}
	size := (c.Params().BitSize + 7) / 8
	if len(r.x) != size || len(r.y) != size || len(r.d) != (c.Params().P.BitLen()+7)/8 {
		return nil, errors.New("EC private key of the wrong size")
	}
	x, y := new(big.Int).SetBytes(r.x), new(big.Int).SetBytes(r.y)
	//lint:ignore SA1019 mirrors go-jose v2's decoding
	if !c.IsOnCurve(x, y) {
		return nil, errors.New("EC key not on its curve")
	}
	//lint:ignore SA1019 mirrors go-jose v2's decoding
	return &ecdsa.PrivateKey{PublicKey: ecdsa.PublicKey{Curve: c, X: x, Y: y}, D: new(big.Int).SetBytes(r.d)}, nil
}

func (r *rawJWK) rsaPrivate() (*rsa.PrivateKey, error) {
	if !r.hasN || !r.hasE || !r.hasD || !r.hasP || !r.hasQ {
		return nil, errors.New("RSA private key without n, e, d, p or q")
	}
	k := &rsa.PrivateKey{
		PublicKey: rsa.PublicKey{N: new(big.Int).SetBytes(r.n), E: int(new(big.Int).SetBytes(r.e).Int64())},
		D:         new(big.Int).SetBytes(r.d),
		Primes:    []*big.Int{new(big.Int).SetBytes(r.p), new(big.Int).SetBytes(r.q)},
	}
	if r.hasDp {
		k.Precomputed.Dp = new(big.Int).SetBytes(r.dp)
	}
	if r.hasDq {
		k.Precomputed.Dq = new(big.Int).SetBytes(r.dq)
	}
	if r.hasQi {
		k.Precomputed.Qinv = new(big.Int).SetBytes(r.qi)
	}
	if err := k.Validate(); err != nil {
		return nil, fmt.Errorf("RSA private key: %w", err)
	}
	return k, nil
}

// checkThumbprints checks x5t and x5t#S256: base64url, hex-encoded or
// raw digests of the right size, matching the first certificate.
func (r *rawJWK) checkThumbprints(certs []*x509.Certificate) error {
	sum1, err := thumbprint(r.x5t, sha1.Size)
	if err != nil {
		return fmt.Errorf("x5t: %w", err)
	}
	sum256, err := thumbprint(r.x5tS256, sha256.Size)
	if err != nil {
		return fmt.Errorf("x5t#S256: %w", err)
	}
	if len(certs) == 0 {
		return nil
	}
	s1, s256 := sha1.Sum(certs[0].Raw), sha256.Sum256(certs[0].Raw)
	if len(sum1) > 0 && !bytes.Equal(sum1, s1[:]) || len(sum256) > 0 && !bytes.Equal(sum256, s256[:]) {
		return errors.New("certificate thumbprint does not match the x5c certificate")
	}
	return nil
}

func thumbprint(s string, size int) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, errors.New("not base64url")
	}
	if len(b) == 2*size {
		if b, err = hex.DecodeString(string(b)); err != nil {
			return nil, errors.New("not a hex digest")
		}
	}
	if len(b) > 0 && len(b) != size {
		return nil, fmt.Errorf("%d bytes; want %d", len(b), size)
	}
	return b, nil
}

func parseCertChain(chain []string) ([]*x509.Certificate, error) {
	out := make([]*x509.Certificate, len(chain))
	for i, c := range chain {
		der, err := base64.StdEncoding.DecodeString(c)
		if err != nil {
			return nil, errors.New("certificate is not base64")
		}
		if out[i], err = x509.ParseCertificate(der); err != nil {
			return nil, fmt.Errorf("certificate %d: %w", i, err)
		}
	}
	return out, nil
}
