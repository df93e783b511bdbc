package oidc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	gojose "github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"
)

// A refetch of the same document keeps the parsed keys, and with them
// the ES256 tables they built; a changed document is parsed afresh.
func TestFetchKeepsTheKeysOfAnUnchangedDocument(t *testing.T) {
	jwks := func() string {
		priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		raw, err := json.Marshal(gojose.JSONWebKeySet{Keys: []gojose.JSONWebKey{{Key: &priv.PublicKey, KeyID: "k", Algorithm: "ES256"}}})
		require.NoError(t, err)
		return string(raw)
	}
	body := jwks()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	ks := &keySet{url: srv.URL, client: srv.Client(), now: time.Now, ctx: context.Background(), log: slog.New(slog.DiscardHandler)}

	first, err := ks.fetch()
	require.NoError(t, err)
	again, err := ks.fetch()
	require.NoError(t, err)
	require.Same(t, &first.keys[0], &again.keys[0], "the same document keeps its keys")

	body = jwks()
	changed, err := ks.fetch()
	require.NoError(t, err)
	require.NotSame(t, &first.keys[0], &changed.keys[0], "a new document is parsed")
}
