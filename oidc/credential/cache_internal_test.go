package credential

import (
	"bytes"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

func TestDecodeEntry(t *testing.T) {
	e := entry{Key: "k1", IDToken: "a.b.c", RefreshToken: "r", Failures: 2, LastFailure: time.Unix(1700000000, 0).UTC()}
	good, err := encodeEntry(e)
	require.NoError(t, err)
	got, err := decodeEntry(good, "k1")
	require.NoError(t, err)
	require.Equal(t, e, got)

	for name, data := range map[string][]byte{
		"empty":          nil,
		"truncated":      good[:len(good)-10],
		"edited":         bytes.Replace(good, []byte(`"r"`), []byte(`"s"`), 1),
		"no header":      good[bytes.IndexByte(good, '\n')+1:],
		"other version":  bytes.Replace(good, []byte(" v1 "), []byte(" v2 "), 1),
		"trailing value": append(append([]byte{}, good...), []byte("{}")...),
	} {
		_, err := decodeEntry(data, "k1")
		require.ErrorIs(t, err, errCacheCorrupt, name)
	}
	_, err = decodeEntry(good, "k2")
	require.ErrorIs(t, err, errCacheCorrupt, "another configuration's entry")

	_, err = decodeEntry(frame([]byte(`{"key":"k1","extra":1}`)), "k1")
	require.ErrorIs(t, err, errCacheCorrupt, "unknown field")
}

// FuzzDecodeEntry: decodeEntry never panics, and what it accepts encodes
// back to an entry it accepts again, unchanged.
func FuzzDecodeEntry(f *testing.F) {
	good, _ := encodeEntry(entry{Key: "k", IDToken: "x.y.z", RefreshToken: "r", Failures: 1, LastFailure: time.Unix(1, 0).UTC()})
	f.Add(good, "k")
	f.Add(frame([]byte(`{"key":"k","failures":-1}`)), "k")
	f.Add(frame([]byte(`{"key":"k","last_failure":"x"}`)), "k")
	f.Add([]byte(cacheMagic+"00\n{}"), "")
	f.Fuzz(func(t *testing.T, data []byte, key string) {
		e, err := decodeEntry(data, key)
		if err != nil {
			require.ErrorIs(t, err, errCacheCorrupt)
			return
		}
		again, err := encodeEntry(e)
		require.NoError(t, err)
		e2, err := decodeEntry(again, key)
		require.NoError(t, err)
		require.Equal(t, e, e2)
	})
}

// frame frames an arbitrary body as encodeEntry does.
func frame(body []byte) []byte {
	return append([]byte(cacheMagic+sumHex(body)+"\n"), body...)
}

// TestKey: every field that changes the token changes the key; the
// order of scopes and parameters does not.
func TestKey(t *testing.T) {
	base := Config{IssuerURL: "https://idp", ClientID: "c", Scopes: []string{"email", "groups"}, CacheDir: "/x"}
	key := func(c Config) string {
		c, err := c.withDefaults()
		require.NoError(t, err)
		return c.key()
	}
	k := key(base)
	same := base
	same.Scopes = []string{"groups", "email", "openid"}
	same.RedirectPorts = []int{9000}
	require.Equal(t, k, key(same))
	for name, edit := range map[string]func(*Config){
		"issuer": func(c *Config) { c.IssuerURL = "https://idp2" },
		"client": func(c *Config) { c.ClientID = "d" },
		"scopes": func(c *Config) { c.Scopes = []string{"email"} },
		"grant":  func(c *Config) { c.Grant = GrantDeviceCode },
		"params": func(c *Config) { c.ExtraParams = map[string]string{"connector_id": "local"} },
	} {
		c := base
		edit(&c)
		require.NotEqual(t, k, key(c), name)
	}
}

// TestArgsRoundTrip: the flags AddFlags parses give back the Config Args
// rendered.
func TestArgsRoundTrip(t *testing.T) {
	want := Config{IssuerURL: "https://idp/dex", ClientID: "tenant-a-kubernetes-prod", Scopes: []string{"email", "offline_access"},
		Grant: GrantDeviceCode, ExtraParams: map[string]string{"connector_id": "local", "prompt": "login"},
		CertificateAuthority: []byte("-----BEGIN CERTIFICATE-----\n"), CacheDir: "/c", RedirectPorts: []int{8000, 18000},
		SignInTimeout: time.Minute, MaxFailedSignIns: 5}
	var got Config
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	got.AddFlags(fs)
	require.NoError(t, fs.Parse(want.Args()))
	require.Equal(t, want, got)
}
