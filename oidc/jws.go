package oidc

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
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

// jwsAlgorithms are kube-apiserver's AllValidSigningAlgorithms.
var jwsAlgorithms = [...]string{"ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "RS256", "RS384", "RS512"}

// jws is a parsed compact JWS.
type jws struct {
	alg, kid string
	// critOK is false when crit names anything but b64 (critNames) or is
	// not a list of strings.
	critOK    bool
	critNames []string
	payload   []byte
	sig       []byte
	// input is the signing input, what the signature covers.
	input string
}

// parseJWS reads a compact JWS the way go-jose v2 and go-oidc v2 do,
// given its payload as splitToken decoded it. Its errors are
// *MalformedTokenError and *AlgorithmError.
func parseJWS(raw string, payload []byte) (*jws, error) {
	if strings.Count(raw, ".") != 2 {
		return nil, &MalformedTokenError{Reason: "not three dot-separated parts"}
	}
	s, stripped := stripSpace(raw)
	h, rest, _ := strings.Cut(s, ".")
	p, sig, _ := strings.Cut(rest, ".")
	enc := base64.RawURLEncoding
	header, err := enc.DecodeString(h)
	if err != nil {
		return nil, &MalformedTokenError{Reason: "header is not base64url"}
	}
	// The payload part decoded before the whitespace went (line breaks
	// are all base64 ignores, and all splitToken let through): same bytes.
	t := &jws{critOK: true, payload: payload}
	if t.sig, err = enc.DecodeString(sig); err != nil {
		return nil, &MalformedTokenError{Reason: "signature is not base64url"}
	}
	b64, err := t.readHeader(header)
	if err != nil {
		return nil, err
	}
	if !knownAlgorithm(t.alg) {
		return nil, &AlgorithmError{Algorithm: t.alg}
	}
	switch {
	case !b64:
		t.input = enc.EncodeToString(header) + "." + string(t.payload)
	case !stripped && canonical(h) && canonical(p):
		t.input = s[:len(h)+1+len(p)]
	default:
		t.input = enc.EncodeToString(header) + "." + enc.EncodeToString(t.payload)
	}
	return t, nil
}

// decodeSegment decodes one part of a compact JWS.
func decodeSegment(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }

func knownAlgorithm(alg string) bool {
	for _, a := range jwsAlgorithms {
		if a == alg {
			return true
		}
	}
	return false
}

// readHeader decodes the JOSE header and returns its b64 value.
func (t *jws) readHeader(header []byte) (b64 bool, err error) {
	b64 = true
	if len(header) == 0 {
		return true, nil // no header: no alg, refused by the caller
	}
	if !validJSON(header, false) {
		return true, &MalformedTokenError{Reason: "header is not JSON"}
	}
	if isNull(header) {
		return true, nil
	}
	err = forkObject(header, func(name string, v []byte) error {
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
			k, err := decodeJWK(v)
			if err == nil && !embeddablePublic(k.key) {
				err = errors.New("not a public key")
			}
			if err != nil {
				return errors.New("invalid embedded jwk: " + err.Error())
			}
			return nil
		case "crit":
			t.readCrit(v)
		case "b64":
			b64 = !isFalse(v, skipSpace(v, 0))
		}
		return forkInterface(v)
	})
	if err != nil {
		var mal *MalformedTokenError
		if errors.As(err, &mal) {
			return true, mal
		}
		return true, &MalformedTokenError{Reason: "header: " + err.Error()}
	}
	return b64, nil
}

// readCrit records whether crit is a list of strings naming only b64.
func (t *jws) readCrit(v []byte) {
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
			end, _ := scanString(v, i)
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
