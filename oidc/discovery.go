package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/apiserver/pkg/apis/apiserver"
)

// Discovery, as kube-apiserver 1.37 does it with go-oidc v2: GET
// <issuer>/.well-known/openid-configuration (or issuer.discoveryURL), whose
// "issuer" must equal the configured URL byte for byte and whose jwks_uri
// must be set. The apiserver retries every 10 seconds in the background
// until it succeeds and refuses tokens meanwhile ("authenticator not
// initialized"); VerifierConfig.BackgroundDiscovery does the same, the
// default is to fail NewVerifier.

// defaultDiscoveryRetryInterval is the longest wait between background
// discovery attempts: the apiserver's polling period.
const defaultDiscoveryRetryInterval = 10 * time.Second

const maxDiscoveryBytes = 1 << 20

// providerDoc is the discovery document with go-oidc v2's types: a member
// of another type fails discovery.
type providerDoc struct {
	Issuer      string   `json:"issuer"`
	AuthURL     string   `json:"authorization_endpoint"`
	TokenURL    string   `json:"token_endpoint"`
	JWKSURL     string   `json:"jwks_uri"`
	UserInfoURL string   `json:"userinfo_endpoint"`
	Algorithms  []string `json:"id_token_signing_alg_values_supported"`
}

// discover reads the issuer's discovery document and returns the JWKS URL.
func discover(ctx context.Context, client *http.Client, iss apiserver.Issuer) (string, error) {
	wellKnown := strings.TrimSuffix(iss.URL, "/") + "/.well-known/openid-configuration"
	target := wellKnown
	if iss.DiscoveryURL != "" {
		if _, err := url.Parse(iss.DiscoveryURL); err != nil {
			return "", fmt.Errorf("%w: issuer.discoveryURL: %w", ErrInvalidConfig, err)
		}
		target = iss.DiscoveryURL
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return "", fmt.Errorf("discover %s: %w", iss.URL, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("discover %s: %w", iss.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDiscoveryBytes))
	if err != nil {
		return "", fmt.Errorf("discover %s: %w", iss.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("discover %s: %s", iss.URL, resp.Status)
	}
	var doc providerDoc
	if err := json.Unmarshal(body, &doc); err != nil {
		return "", fmt.Errorf("discover %s: decode: %s", iss.URL, jsonProblem(err))
	}
	if doc.Issuer != iss.URL {
		return "", fmt.Errorf("discover %s: the document names issuer %q", iss.URL, doc.Issuer)
	}
	if doc.JWKSURL == "" {
		return "", fmt.Errorf("discover %s: no jwks_uri", iss.URL)
	}
	return doc.JWKSURL, nil
}

// startDiscovery discovers the issuer once, then, if that fails and
// BackgroundDiscovery is set, keeps retrying until it succeeds, Close is
// called or ctx is done.
func (v *Verifier) startDiscovery(ctx context.Context, client *http.Client) error {
	err := v.discoverOnce(ctx, client)
	if err == nil || !v.cfg.BackgroundDiscovery {
		close(v.done)
		return err
	}
	v.cfg.Logger.Warn("issuer discovery failed; retrying in the background", "issuer", v.jwt.Issuer.URL, "err", err)
	go func() {
		defer close(v.done)
		wait := min(time.Second, v.cfg.DiscoveryRetryInterval)
		for {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-v.ctx.Done():
				t.Stop()
				return
			case <-ctx.Done():
				t.Stop()
				return
			}
			if v.discoverOnce(v.ctx, client) == nil {
				v.cfg.Logger.Info("issuer discovered", "issuer", v.jwt.Issuer.URL)
				return
			}
			wait = min(2*wait, v.cfg.DiscoveryRetryInterval)
		}
	}()
	return nil
}

// discoverOnce makes one attempt and installs the key set on success.
func (v *Verifier) discoverOnce(ctx context.Context, client *http.Client) error {
	jwksURL, err := discover(ctx, client, v.jwt.Issuer)
	if err != nil {
		if errors.Is(err, ErrInvalidConfig) {
			return err
		}
		v.notReady.Store(&NotReadyError{Issuer: v.jwt.Issuer.URL, Err: err})
		return err
	}
	v.keys.Store(v.newRemoteKeySet(jwksURL, client))
	return nil
}
