package jose

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode"
)

// The compact JWS reader. kube-apiserver 1.37 parses a token with go-jose
// v2 (twice: go-oidc v2's verifier, then its key set) and checks the
// algorithm with go-oidc v2; this file does both once, with the same
// outcome:
//
//   - whitespace anywhere in the token is removed first (unicode.IsSpace);
//   - the header is a JSON object (or null) without a duplicate member at
//     any depth; kid, alg and nonce are strings, x5c certificates, jwk a
//     public key; null members count as absent;
//   - the algorithm must be one of RS/ES/PS 256/384/512 ("" when absent);
//   - the signature covers the header and payload re-encoded from their
//     decoded bytes, and the payload unencoded when the header says
//     "b64": false (RFC 7797, with or without crit);
//   - a crit header other than ["b64"] makes every key fail.

// Algorithms are kube-apiserver's AllValidSigningAlgorithms, the ones
// --authentication-config accepts.
var Algorithms = [...]string{"ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "RS256", "RS384", "RS512"}

// JWS is a parsed compact JWS.
type JWS struct {
	// Alg and KeyID are the alg and kid headers ("" when absent).
	Alg, KeyID string
	// CritOK is false when crit names anything but b64 (CritNames) or is
	// not a list of strings: go-jose then refuses every key.
	CritOK    bool
	CritNames []string
	Payload   []byte
	Signature []byte
	// SigningInput is what the signature covers.
	SigningInput string
}

// MalformedError is a token go-jose v2 cannot parse.
type MalformedError struct{ Reason string }

func (e *MalformedError) Error() string { return "malformed JWS: " + e.Reason }

// AlgorithmError is a token whose alg is not one of Algorithms.
type AlgorithmError struct{ Alg string }

func (e *AlgorithmError) Error() string { return fmt.Sprintf("unsupported algorithm %q", e.Alg) }

// Parse reads a compact JWS the way go-jose v2 and go-oidc v2 do, given
// its payload part as base64.RawURLEncoding decodes it. cache, if not nil,
// remembers headers already read. Its errors are *MalformedError and
// *AlgorithmError.
func Parse(raw string, payload []byte, cache *HeaderCache) (*JWS, error) {
	if strings.Count(raw, ".") != 2 {
		return nil, &MalformedError{Reason: "not three dot-separated parts"}
	}
	// Whitespace is rare: base64 refuses it (but for line breaks, which it
	// skips), so try without the rune-by-rune strip first.
	if strings.IndexByte(raw, '\n') < 0 && strings.IndexByte(raw, '\r') < 0 {
		t, err := parse(raw, false, payload, cache)
		if !errors.Is(err, errNotBase64) {
			return t, err
		}
	}
	s, stripped := stripSpace(raw)
	t, err := parse(s, stripped, payload, cache)
	if errors.Is(err, errNotBase64) {
		return nil, &MalformedError{Reason: err.Error()}
	}
	return t, err
}

var errNotBase64 = errors.New("not base64url")

// parse reads s, the token after stripSpace.
func parse(s string, stripped bool, payload []byte, cache *HeaderCache) (*JWS, error) {
	h, rest, _ := strings.Cut(s, ".")
	p, sig, _ := strings.Cut(rest, ".")
	enc := base64.RawURLEncoding
	signature, err := enc.DecodeString(sig)
	if err != nil {
		return nil, fmt.Errorf("signature %w", errNotBase64)
	}
	hd := cache.get(h)
	if hd == nil {
		header, err := enc.DecodeString(h)
		if err != nil {
			return nil, fmt.Errorf("header %w", errNotBase64)
		}
		if hd, err = readHeader(header); err != nil {
			return nil, err
		}
		if !knownAlgorithm(hd.alg) {
			return nil, &AlgorithmError{Alg: hd.alg}
		}
		hd.encoded = enc.EncodeToString(header)
		cache.put(h, hd)
	}
	t := &JWS{Alg: hd.alg, KeyID: hd.kid, CritOK: hd.critOK, CritNames: hd.critNames, Payload: payload, Signature: signature}
	switch {
	case !hd.b64:
		t.SigningInput = hd.encoded + "." + string(payload)
	case !stripped && h == hd.encoded && canonical(p):
		t.SigningInput = s[:len(h)+1+len(p)]
	default:
		t.SigningInput = hd.encoded + "." + enc.EncodeToString(payload)
	}
	return t, nil
}

func knownAlgorithm(alg string) bool {
	for _, a := range Algorithms {
		if a == alg {
			return true
		}
	}
	return false
}

// header is what a JOSE header says.
type header struct {
	alg, kid  string
	critOK    bool // crit absent, or naming only b64
	critNames []string
	b64       bool
	encoded   string // the header re-encoded from its bytes
}

// readHeader decodes the JOSE header.
func readHeader(data []byte) (*header, error) {
	t := &header{critOK: true, b64: true}
	if len(data) == 0 {
		return t, nil // no header: no alg, refused by the caller
	}
	if !Valid(data, false) {
		return nil, &MalformedError{Reason: "header is not JSON"}
	}
	if isNull(data) {
		return t, nil
	}
	err := forkObject(data, func(name string, v []byte) error {
		if isNull(v) {
			return nil
		}
		switch name {
		case "alg":
			return forkString(v, &t.alg)
		case "kid":
			return forkString(v, &t.kid)
		case "nonce":
			var s string
			return forkString(v, &s)
		case "x5c":
			var chain []string
			if err := forkStrings(v, &chain); err != nil {
				return err
			}
			_, err := parseCertChain(chain)
			return err
		case "jwk":
			k, err := DecodeKey(v)
			if err == nil && !embeddablePublic(k.Key) {
				err = errors.New("not a public key")
			}
			if err != nil {
				return errors.New("invalid embedded jwk: " + err.Error())
			}
			return nil
		case "crit":
			t.readCrit(v)
		case "b64":
			t.b64 = !isFalse(v, SkipSpace(v, 0))
		}
		return forkInterface(v)
	})
	if err != nil {
		return nil, &MalformedError{Reason: "header: " + err.Error()}
	}
	return t, nil
}

// readCrit records whether crit is a list of strings naming only b64.
func (t *header) readCrit(v []byte) {
	var names []string
	if forkArray(v, func(e []byte) error {
		var s string
		if isNull(e) || forkString(e, &s) != nil {
			return errDuplicateMember // any error: not a list of strings
		}
		names = append(names, s)
		return nil
	}) != nil {
		t.critOK, t.critNames = false, nil
		return
	}
	for _, n := range names {
		if n != "b64" {
			t.critOK = false
			t.critNames = append(t.critNames, n)
		}
	}
}

// isFalse reports whether the value at data[i] is the literal false.
func isFalse(data []byte, i int) bool {
	return len(data)-i >= 5 && string(data[i:i+5]) == "false"
}

func embeddablePublic(k any) bool {
	switch k := k.(type) {
	case *rsa.PublicKey:
		return k.E != 0
	case *ecdsa.PublicKey, ed25519.PublicKey:
		return true
	}
	return false
}

// forkInterface checks that a header value decodes into interface{}: no
// duplicate member at any depth and numbers within float64's range.
func forkInterface(v []byte) error {
	if err := forkNoDuplicates(v); err != nil {
		return err
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			end, _ := ScanString(v, i)
			i = end - 1
		case c == '-' || c >= '0' && c <= '9':
			j := skipValue(v, i)
			if _, err := strconv.ParseFloat(string(v[i:j]), 64); err != nil {
				return errors.New("number out of range")
			}
			i = j - 1
		}
	}
	return nil
}

// stripSpace removes what go-jose v2 removes before parsing: every rune
// unicode.IsSpace reports (invalid UTF-8 becomes U+FFFD, as strings.Map
// writes it). The common token has only base64url characters and dots.
func stripSpace(s string) (string, bool) {
	clean := true
	for i := 0; i < len(s); i++ {
		if !isB64URL(s[i]) && s[i] != '.' {
			clean = false
			break
		}
	}
	if clean {
		return s, false
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if !unicode.IsSpace(r) {
			b.WriteRune(r)
		}
	}
	return b.String(), true
}

func isB64URL(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// canonical reports whether a decodable unpadded base64url string is the
// encoding of its bytes (its unused trailing bits are zero).
func canonical(s string) bool {
	if len(s)%4 == 0 {
		return true
	}
	v := b64Value(s[len(s)-1])
	if len(s)%4 == 2 {
		return v&0x0f == 0
	}
	return v&0x03 == 0
}

func b64Value(c byte) byte {
	switch {
	case c >= 'A' && c <= 'Z':
		return c - 'A'
	case c >= 'a' && c <= 'z':
		return c - 'a' + 26
	case c >= '0' && c <= '9':
		return c - '0' + 52
	case c == '-':
		return 62
	}
	return 63
}

// HeaderCache remembers the headers Parse has read, by their encoded form:
// tokens of one issuer repeat a few headers (alg, kid, typ), and a cached
// header skips decoding and checking it. It holds headers only (they
// carry no credential), at most maxCachedHeaders of them. The zero value
// is ready; it is safe for concurrent use.
type HeaderCache struct {
	m atomic.Pointer[map[string]*header]
}

const maxCachedHeaders = 64

func (c *HeaderCache) get(h string) *header {
	if c == nil {
		return nil
	}
	if m := c.m.Load(); m != nil {
		return (*m)[h]
	}
	return nil
}

// put adds a header, copying the map (reads take no lock); a full cache
// starts over.
func (c *HeaderCache) put(h string, hd *header) {
	if c == nil {
		return
	}
	old := c.m.Load()
	next := map[string]*header{}
	if old != nil && len(*old) < maxCachedHeaders {
		next = make(map[string]*header, len(*old)+1)
		for k, v := range *old {
			next[k] = v
		}
	}
	next[strings.Clone(h)] = hd
	c.m.CompareAndSwap(old, &next)
}
