package oidc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzSplitClaims checks the fast claims splitter against encoding/json:
// whenever encoding/json decodes a payload into a map, the splitter either
// declines or returns the same map, and the same iss and nbf as a struct
// decode (case-insensitive field matching).
func FuzzSplitClaims(f *testing.F) {
	for _, seed := range []string{
		`{}`, ` { "iss" : "https://idp" , "aud":["a","b"] } `, `{"iss":"a","ISS":"b","iſſ":"c"}`,
		`{"nbf":1,"NBF":"2","x":{"y":[1,{"z":"}"}]}}`, `{"k\u00e9y":"v","a\"b":null,"e":1e3,"t":true}`,
		`{"a":1,"a":2}`, `[1]`, `{"a":}`, `{"a":1,}`, `{"\xff":1}`, `{"a":"\xff"}`, `{"a":[[[[]]]]}` + strings.Repeat(" ", 3),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want claims
		if json.Unmarshal(data, &want) != nil || want == nil {
			return
		}
		got, iss, nbf, ok := splitClaims(data)
		if !ok {
			return
		}
		require.Equal(t, len(want), len(got))
		for k, v := range want {
			require.Equal(t, string(v), string(got[k]), "key %q", k)
		}
		var fields struct {
			Iss json.RawMessage `json:"iss"`
			Nbf json.RawMessage `json:"nbf"`
		}
		require.NoError(t, json.Unmarshal(data, &fields))
		require.Equal(t, string(fields.Iss), string(iss))
		require.Equal(t, string(fields.Nbf), string(nbf))
	})
}

func TestSplitClaimsHandlesCommonTokens(t *testing.T) {
	c, iss, _, ok := splitClaims([]byte(`{"iss":"https://idp","aud":["a"],"exp":1,"email":"a@b","groups":["g"],"ISS":"x"}`))
	require.True(t, ok)
	require.Equal(t, `"x"`, string(iss))
	require.Equal(t, `["g"]`, string(c["groups"]))
	require.Len(t, c, 6)
}
