package oidc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/oidc/internal/jose"
)

var payloadSeeds = []string{
	`{}`, ` { "iss" : "https://idp" , "aud":["a","b"] } `, `{"iss":"a","ISS":"b","iſſ":"c"}`,
	`{"nbf":1,"NBF":"2","x":{"y":[1,{"z":"}"}]}}`, `{"k\u00e9y":"v","a\"b":null,"e":1e3,"t":true}`,
	`{"a":1,"a":2}`, `[1]`, `{"a":}`, `{"a":1,}`, `{"\xff":1}`, `{"a":"\xff"}`, `{"a":[[[[]]]]}` + strings.Repeat(" ", 3),
	`{"exp":1.5e9,"iat":"17","nbf":null,"aud":null}`, `{"exp":null}`, `{"sub":5}`, `{"_claim_names":{"g":""}}`,
	`{"aud":["a",null],"nonce":"n","at_hash":"h","_claim_sources":{"s":{"endpoint":"e"}}}`,
	`{"a":-0.5E-3,"b":01}`, `{"a":"\u12"}`, `{"a":tru}`, `{"a":"x"}x`, `{"ex\u0070":1}`, `{"Exp":"x","exp":1}`,
	`{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
}

// FuzzScanPayload checks the payload scanner against encoding/json: the
// same payloads are valid objects with the same members, the same
// untrusted issuer, and the same go-oidc claims (or the same failure).
func FuzzScanPayload(f *testing.F) {
	for _, seed := range payloadSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		require.Equal(t, json.Valid(data), jose.Valid(data, true), "validJSON")
		var want map[string]json.RawMessage
		wantOK := json.Unmarshal(data, &want) == nil && want != nil
		p, ok := scanPayload(data)
		require.Equal(t, wantOK, ok, "scanPayload ok")
		if !ok {
			return
		}
		got := map[string]string{}
		for i, m := range p.claims {
			if p.claims.last(i) {
				got[string(m.name)] = string(m.value)
			}
		}
		require.Equal(t, len(want), len(got))
		for k, v := range want {
			require.Equal(t, string(v), got[k], "member %q", k)
			gv, ok := p.claims.get(k)
			require.True(t, ok)
			require.Equal(t, string(v), string(gv))
		}

		var issWant struct {
			Issuer string `json:"iss"`
		}
		issErr := json.Unmarshal(data, &issWant)
		iss, err := untrustedIssuer(&p, data)
		require.Equal(t, issErr == nil, err == nil, "untrusted iss: %v", issErr)
		if err == nil && issWant.Issuer != googleIssuer {
			require.Equal(t, issWant.Issuer, iss)
		}

		var fieldsWant oidcFields
		fieldsErr := json.Unmarshal(data, &fieldsWant)
		fields, err := decodeOIDCFields(&p, data)
		require.Equal(t, fieldsErr == nil, err == nil, "oidc fields: %v / %v", fieldsErr, err)
		if err == nil {
			require.Equal(t, fieldsWant, *fields)
		}
	})
}

func TestScanPayloadHandlesCommonTokens(t *testing.T) {
	p, ok := scanPayload([]byte(`{"iss":"https://idp","aud":["a"],"exp":1,"email":"a@b","groups":["g"]}`))
	require.True(t, ok)
	require.False(t, p.folded)
	groups, _ := p.claims.get("groups")
	require.Equal(t, `["g"]`, string(groups))
	require.Equal(t, `"https://idp"`, string(p.known[0]))
	require.Len(t, p.claims, 5)

	p, ok = scanPayload([]byte(`{"iss":"https://idp","ISS":"x"}`))
	require.True(t, ok)
	require.True(t, p.folded, "a case variant of iss sends the decoding to encoding/json")
	iss, err := untrustedIssuer(&p, []byte(`{"iss":"https://idp","ISS":"x"}`))
	require.NoError(t, err)
	require.Equal(t, "x", iss)
}

func TestValidJSONWithoutDepthLimit(t *testing.T) {
	deep := []byte(strings.Repeat("[", 20000) + strings.Repeat("]", 20000))
	require.False(t, jose.Valid(deep, true), "encoding/json stops at 10000 levels")
	require.True(t, jose.Valid(deep, false), "go-jose v2's JSON has no limit")
}

// FuzzDecodeAny checks the CEL claim decoder against encoding/json.
func FuzzDecodeAny(f *testing.F) {
	for _, s := range []string{`"a"`, `["a","b"]`, `[]`, `true`, `null`, `1`, `1e400`, `["a",1]`, `{"a":1,"a":2}`, `"\u00e9"`, `[ "a" ]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		var want any
		wantErr := json.Unmarshal(raw, &want)
		got, err := decodeAny(raw)
		require.Equal(t, wantErr == nil, err == nil)
		require.Equal(t, want, got)
	})
}
