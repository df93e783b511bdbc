package jose

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// p256Fixture is a P-256 key with its scalar, to sign and to craft
// signatures.
type p256Fixture struct {
	priv *ecdsa.PrivateKey
	d    *big.Int
	tab  *p256Table
}

func newP256Fixture(t testing.TB, raw []byte) p256Fixture {
	t.Helper()
	if raw == nil {
		raw = make([]byte, 32)
		_, err := rand.Read(raw)
		require.NoError(t, err)
	}
	priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), raw)
	require.NoError(t, err)
	tab, err := newP256Table(&priv.PublicKey)
	require.NoError(t, err)
	return p256Fixture{priv: priv, d: new(big.Int).SetBytes(raw), tab: tab}
}

func sig64(r, s *big.Int) []byte {
	out := make([]byte, 64)
	r.FillBytes(out[:32])
	s.FillBytes(out[32:])
	return out
}

// sign returns a valid r||s over digest.
func (f p256Fixture) sign(t testing.TB, digest []byte) []byte {
	t.Helper()
	r, s, err := ecdsa.Sign(rand.Reader, f.priv, digest)
	require.NoError(t, err)
	return sig64(r, s)
}

// mod reduces x modulo n, the order of P-256's base point.
func mod(x *big.Int) *big.Int { return x.Mod(x, p256Order) }

// agree requires the table and crypto/ecdsa to decide alike and returns
// the decision.
func (f p256Fixture) agree(t testing.TB, digest, sig []byte) bool {
	t.Helper()
	want := ecdsa.Verify(&f.priv.PublicKey, digest, new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
	require.Equal(t, want, f.tab.verify(digest, sig), "digest %x sig %x", digest, sig)
	return want
}

func TestP256TableAgrees(t *testing.T) {
	n := p256Order
	big2 := func(v int64) *big.Int { return big.NewInt(v) }
	nMinus := func(v int64) *big.Int { return new(big.Int).Sub(n, big2(v)) }
	all1 := new(big.Int).Sub(new(big.Int).Lsh(big2(1), 256), big2(1))
	for i := 0; i < 40; i++ {
		f := newP256Fixture(t, nil)
		digest := sha256.Sum256([]byte{byte(i)})
		sig := f.sign(t, digest[:])
		require.True(t, f.agree(t, digest[:], sig), "a valid signature")

		// One flipped bit anywhere: digest, r or s.
		for _, bit := range []int{0, 7, 100, 255, 256, 300, 511} {
			bad := append([]byte{}, sig...)
			bad[bit/8] ^= 1 << (bit % 8)
			require.False(t, f.agree(t, digest[:], bad))
		}
		flipped := digest
		flipped[31] ^= 1
		require.False(t, f.agree(t, flipped[:], sig))

		// r and s at and beyond their bounds.
		r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
		for _, v := range []*big.Int{big2(0), big2(1), nMinus(1), n, new(big.Int).Add(n, big2(1)), all1} {
			f.agree(t, digest[:], sig64(v, s))
			f.agree(t, digest[:], sig64(r, v))
		}
		// r and n+r are the same residue, but only r is a signature.
		if rn := new(big.Int).Add(r, n); rn.BitLen() <= 256 {
			require.False(t, f.agree(t, digest[:], sig64(rn, s)))
		}

		// The sum is the point at infinity: r = -e/d, so u1·G = -u2·Q.
		e := new(big.Int).SetBytes(digest[:])
		dInv := new(big.Int).ModInverse(f.d, n)
		rInf := mod(new(big.Int).Neg(new(big.Int).Mul(e, dInv)))
		require.False(t, f.agree(t, digest[:], sig64(rInf, big2(12345))))
		// Both halves are the same point: r = e/d, so the addition doubles.
		rDbl := mod(new(big.Int).Mul(e, dInv))
		f.agree(t, digest[:], sig64(rDbl, big2(777)))
	}

	// Digests that are 0, n and all ones as integers (u1 = 0 for the
	// first two).
	f := newP256Fixture(t, nil)
	for _, e := range []*big.Int{big2(0), n, all1} {
		digest := e.FillBytes(make([]byte, 32))
		require.True(t, f.agree(t, digest, f.sign(t, digest)))
	}
}

func TestP256KeyBuildsItsTableOnFirstSuccess(t *testing.T) {
	f := newP256Fixture(t, nil)
	k := newP256Key(&f.priv.PublicKey)
	require.NotNil(t, k)
	digest := sha256.Sum256([]byte("token"))
	sig := f.sign(t, digest[:])

	bad := append([]byte{}, sig...)
	bad[5] ^= 1
	require.False(t, k.verify(&f.priv.PublicKey, digest[:], bad))
	require.Nil(t, k.table.Load(), "a failed check earns no table")

	require.True(t, k.verify(&f.priv.PublicKey, digest[:], sig))
	require.NotNil(t, k.table.Load(), "the first verified token builds it")
	require.True(t, k.verify(&f.priv.PublicKey, digest[:], sig))
	require.False(t, k.verify(&f.priv.PublicKey, digest[:], bad))

	other, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	require.Nil(t, newP256Key(&other.PublicKey), "P-384 keys keep crypto/ecdsa")
}

// FuzzP256Table compares the table's decision with crypto/ecdsa's for any
// digest and signature under one fixed key.
func FuzzP256Table(f *testing.F) {
	raw := sha256.Sum256([]byte("FuzzP256Table key"))
	fx := newP256Fixture(f, raw[:])
	for i := 0; i < 4; i++ {
		digest := sha256.Sum256([]byte{byte(i)})
		f.Add(digest[:], fx.sign(f, digest[:]))
	}
	f.Add(make([]byte, 32), make([]byte, 64))
	f.Fuzz(func(t *testing.T, digest, sig []byte) {
		if len(digest) != 32 || len(sig) != 64 {
			return // ES256 reaches the table with these sizes only
		}
		fx.agree(t, digest, sig)
	})
}

// BenchmarkP256Verify times crypto/ecdsa and the table on the same
// signature, interleaved, and reports x-crypto-ecdsa (how many times
// faster the table is) and payback (how many verifications the table's
// construction costs in time saved).
func BenchmarkP256Verify(b *testing.B) {
	f := newP256Fixture(b, nil)
	digest := sha256.Sum256([]byte("token"))
	sig := f.sign(b, digest[:])
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	var std, tab, build time.Duration
	for b.Loop() {
		t0 := time.Now()
		okStd := ecdsa.Verify(&f.priv.PublicKey, digest[:], r, s)
		t1 := time.Now()
		okTab := f.tab.verify(digest[:], sig)
		t2 := time.Now()
		if !okStd || !okTab {
			b.Fatal("rejected")
		}
		std += t1.Sub(t0)
		tab += t2.Sub(t1)
	}
	for range 20 {
		t0 := time.Now()
		if _, err := newP256Table(&f.priv.PublicKey); err != nil {
			b.Fatal(err)
		}
		build += time.Since(t0)
	}
	b.ReportMetric(float64(std)/float64(tab), "x-crypto-ecdsa")
	n := float64(b.N)
	b.ReportMetric(float64(build)/20/((float64(std)-float64(tab))/n), "payback")
}
