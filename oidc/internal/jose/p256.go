package jose

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"math/big"
	"sync/atomic"

	"filippo.io/nistec"
)

// ES256 with a table per key. An ECDSA check computes x(u1·G + u2·Q) and
// compares it with r. crypto/ecdsa multiplies the key Q afresh for every
// signature (about 256 doublings and 52 additions), but a JWKS key checks
// many tokens: once a P-256 key has verified one, it keeps the multiples
// j·16^i·Q (i < 64, 1 ≤ j ≤ 15; 90 KiB) and u2·Q is at most 64 additions,
// about half the time of the whole check. The point arithmetic is
// filippo.io/nistec (Go's own crypto/internal/nistec, exported by its
// author). Everything a verification touches is public, so walking the
// table in variable time is fine. Accept and reject are crypto/ecdsa's:
// TestP256TableAgrees and FuzzP256Table compare the two.

// p256Order is n, the order of P-256's base point.
var p256Order = elliptic.P256().Params().N

// p256Key is the ES256 state of one P-256 public key.
type p256Key struct {
	building atomic.Bool
	table    atomic.Pointer[p256Table]
}

// newP256Key returns the state for pub, or nil when pub is on another
// curve.
func newP256Key(pub *ecdsa.PublicKey) *p256Key {
	if pub.Curve != elliptic.P256() {
		return nil
	}
	return new(p256Key)
}

// verify checks an ES256 signature (r||s, 32 bytes each) over a SHA-256
// digest with pub, the key k belongs to. Until the key has verified a
// token, crypto/ecdsa checks it; the first success builds the table, so
// only keys the issuer signs with ever get one.
func (k *p256Key) verify(pub *ecdsa.PublicKey, hashed, sig []byte) bool {
	if t := k.table.Load(); t != nil {
		return t.verify(hashed, sig)
	}
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	ok := ecdsa.Verify(pub, hashed, r, s)
	if ok && k.building.CompareAndSwap(false, true) {
		if t, err := newP256Table(pub); err == nil {
			k.table.Store(t)
		}
	}
	return ok
}

// p256Table holds j·16^i·Q at [i][j-1].
type p256Table [64][15]nistec.P256Point

// newP256Table computes the table of pub's multiples (960 additions).
func newP256Table(pub *ecdsa.PublicKey) (*p256Table, error) {
	ek, err := pub.ECDH()
	if err != nil {
		return nil, err
	}
	q, err := nistec.NewP256Point().SetBytes(ek.Bytes())
	if err != nil {
		return nil, err
	}
	t := new(p256Table)
	for i := range t {
		t[i][0].Set(q)
		for j := 1; j < len(t[i]); j++ {
			t[i][j].Add(&t[i][j-1], q)
		}
		q.Add(&t[i][len(t[i])-1], q) // 16^(i+1)·Q = 15·16^i·Q + 16^i·Q
	}
	return t, nil
}

// verify is crypto/ecdsa's check with u2·Q read from the table:
// r and s in [1, n-1], w = s⁻¹, u1 = e·w, u2 = r·w (mod n),
// R = u1·G + u2·Q not the point at infinity, and x(R) ≡ r (mod n).
func (t *p256Table) verify(hashed, sig []byte) bool {
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if r.Sign() == 0 || s.Sign() == 0 || r.Cmp(p256Order) >= 0 || s.Cmp(p256Order) >= 0 {
		return false
	}
	w := new(big.Int).ModInverse(s, p256Order)
	u1 := new(big.Int).SetBytes(hashed)
	u1.Mul(u1, w).Mod(u1, p256Order)
	u2 := w.Mul(r, w).Mod(w, p256Order)

	var b1, b2 [32]byte
	acc, err := nistec.NewP256Point().ScalarBaseMult(u1.FillBytes(b1[:]))
	if err != nil {
		return false
	}
	u2.FillBytes(b2[:])
	for i := range t {
		// Nibble i of u2, counted from the least significant.
		digit := b2[31-i/2] >> (4 * (i % 2)) & 0xf
		if digit != 0 {
			acc.Add(acc, &t[i][digit-1])
		}
	}
	x, err := acc.BytesX() // fails for the point at infinity
	if err != nil {
		return false
	}
	v := new(big.Int).SetBytes(x) // x < p < 2n: one subtraction reduces it
	if v.Cmp(p256Order) >= 0 {
		v.Sub(v, p256Order)
	}
	return v.Cmp(r) == 0
}
