package localenv

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/cozystack/tenantkit/internal/process"
	"github.com/cozystack/tenantkit/internal/serverbin"
	"github.com/cozystack/tenantkit/localenv/pki"
)

// DexKubectlClient is the static public client kubectl logs in with.
const DexKubectlClient = "kubectl"

// DexMockConnector is the connector that logs in without a password
// (dex's mockCallback: user kilgore@kilgore.trout, group "authors").
const DexMockConnector = "mock"

// DexDeviceCodeGrant is the device authorization grant (RFC 8628), which
// dex allows with PKCE: code_challenge on /device/code, code_verifier on
// /token.
const DexDeviceCodeGrant = "urn:ietf:params:oauth:grant-type:device_code"

// DexConfig configures dex, the OpenID provider of the environment.
type DexConfig struct {
	// Port is the HTTPS port; zero picks a free one. Dex listens on
	// 127.0.0.1, on a kind environment on Env.KindHostAddress, so that the
	// cluster's apiserver reaches it too.
	Port int
	// Clients are the per-cluster clients (one per tenant cluster, named by
	// its client ID). Each trusts the kubectl client as a peer, so that a
	// kubectl login can ask for the scope
	// audience:server:client_id:<id> and get a token for that cluster.
	Clients []string
	// Users are static password users (password grant, local connector).
	Users []DexUser
	// IDTokenTTL is the ID token lifetime. Default 1h.
	IDTokenTTL time.Duration
}

// DexUser is a static user of dex.
type DexUser struct {
	// Email is the login name and the token's email claim.
	Email string
	// Password is the password of the password grant and the login form.
	Password string
	// Groups are the token's groups claim.
	Groups []string
	// EmailUnverified makes dex issue email_verified: false.
	EmailUnverified bool
}

// Dex is a running dex.
type Dex struct {
	// IssuerURL is https://127.0.0.1:<port>/dex (on a kind environment,
	// https://<Env.KindHostAddress>:<port>/dex).
	IssuerURL string
	// CAPEM is the CA of dex's serving certificate (the environment's CA);
	// put it in an AuthenticationConfiguration's certificateAuthority.
	CAPEM []byte
	// Dir holds the configuration, certificate and log.
	Dir string

	ca   *pki.CA
	host string
	proc *process.Process
}

// StartDex starts dex over HTTPS on loopback (a kind environment: on
// KindHostAddress, the cluster's own network) with a certificate from the
// environment's CA: static public client kubectl, one client per entry in
// cfg.Clients trusting kubectl, static password users with groups, the
// password grant, auth-code with PKCE through the mock connector or the
// login form (see SignIn), and the device authorization grant. It
// waits until discovery answers; Stop stops it with the environment.
func (e *Env) StartDex(ctx context.Context, cfg DexConfig) (*Dex, error) {
	if e.ca == nil {
		return nil, ErrUnsupported
	}
	if e.isStopped() {
		return nil, ErrStopped
	}
	bin, err := e.bins.path(ctx, serverbin.Dex)
	if err != nil {
		return nil, err
	}
	host := "127.0.0.1"
	if e.provider == Kind {
		a, err := e.KindHostAddress(ctx)
		if err != nil {
			return nil, fmt.Errorf("start dex: %w", err)
		}
		host = a.String()
	}
	port, err := portOrFree(host, cfg.Port)
	if err != nil {
		return nil, fmt.Errorf("start dex: %w", err)
	}
	dir, err := os.MkdirTemp(e.dir, "dex-")
	if err != nil {
		return nil, fmt.Errorf("start dex: %w", err)
	}
	d := &Dex{IssuerURL: fmt.Sprintf("https://%s/dex", net.JoinHostPort(host, strconv.Itoa(port))), CAPEM: e.ca.CertPEM, Dir: dir, ca: e.ca, host: host}
	conf, err := d.writeConfig(port, cfg)
	if err != nil {
		return nil, err
	}
	d.proc, err = process.Start(process.Config{Name: "dex", Path: bin, Args: []string{"serve", conf},
		LogPath: filepath.Join(dir, "dex.log"), StopGrace: 3 * time.Second})
	if err != nil {
		return nil, err
	}
	client := d.HTTPClient()
	err = process.WaitReady(ctx, d.proc, e.cfg.StartTimeout, process.HTTPOK(client, d.IssuerURL+"/.well-known/openid-configuration"))
	if err != nil {
		_ = d.proc.Kill()
		return nil, err
	}
	e.Track(Component{Name: "dex", Version: e.bins.version(serverbin.Dex), Endpoint: d.IssuerURL, LogPath: d.proc.LogPath(), Process: d.proc})
	e.log.Info("dex ready", "issuer", d.IssuerURL)
	return d, nil
}

func (d *Dex) writeConfig(port int, cfg DexConfig) (string, error) {
	serving, err := d.ca.Issue(pki.Spec{CommonName: "dex", DNSNames: []string{"localhost"}, IPs: []net.IP{net.ParseIP(d.host)}})
	if err != nil {
		return "", err
	}
	certFile, keyFile, err := serving.WriteFiles(d.Dir, "dex")
	if err != nil {
		return "", err
	}
	ttl := cfg.IDTokenTTL
	if ttl == 0 {
		ttl = time.Hour
	}
	type client struct {
		ID           string   `json:"id"`
		Name         string   `json:"name"`
		Public       bool     `json:"public"`
		RedirectURIs []string `json:"redirectURIs,omitempty"`
		TrustedPeers []string `json:"trustedPeers,omitempty"`
	}
	clients := []client{{ID: DexKubectlClient, Name: "kubectl", Public: true,
		RedirectURIs: []string{"http://localhost:8000", "http://localhost:18000"}}}
	for _, id := range cfg.Clients {
		clients = append(clients, client{ID: id, Name: id, Public: true, TrustedPeers: []string{DexKubectlClient}})
	}
	var users []map[string]any
	for i, u := range cfg.Users {
		users = append(users, map[string]any{"email": u.Email, "password": u.Password, "username": u.Email,
			"userID": fmt.Sprintf("user-%d", i), "groups": u.Groups, "emailVerified": !u.EmailUnverified})
	}
	conf := map[string]any{
		"issuer": d.IssuerURL,
		"web":    map[string]any{"https": net.JoinHostPort(d.host, strconv.Itoa(port)), "tlsCert": certFile, "tlsKey": keyFile},
		"oauth2": map[string]any{"skipApprovalScreen": true, "passwordConnector": "local",
			"grantTypes": []string{"authorization_code", "refresh_token", "password", DexDeviceCodeGrant}},
		"expiry":           map[string]any{"idTokens": ttl.String()},
		"enablePasswordDB": true,
		"staticClients":    clients,
		"staticPasswords":  users,
		"connectors":       []map[string]any{{"type": "mockCallback", "id": DexMockConnector, "name": "Mock"}},
	}
	data, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(d.Dir, "config.json")
	return path, os.WriteFile(path, data, 0o600)
}

// HTTPClient returns a client that trusts dex's certificate.
func (d *Dex) HTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: d.ca.Pool(), MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// Stop stops dex.
func (d *Dex) Stop() error { return d.proc.Stop() }

// LogPath returns dex's log file.
func (d *Dex) LogPath() string { return d.proc.LogPath() }

// scopes asks for an ID token whose audience is clientID (the cluster)
// besides kubectl.
func scopes(clientID string) []string {
	s := []string{"openid", "email", "groups", "profile", "offline_access"}
	if clientID != "" {
		s = append(s, "audience:server:client_id:"+clientID)
	}
	return s
}

func (d *Dex) oauth2Config(redirect string) *oauth2.Config {
	return &oauth2.Config{ClientID: DexKubectlClient, RedirectURL: redirect,
		Endpoint: oauth2.Endpoint{AuthURL: d.IssuerURL + "/auth", TokenURL: d.IssuerURL + "/token", AuthStyle: oauth2.AuthStyleInParams}}
}

// PasswordToken logs a static user in with the password grant, as client
// kubectl, and returns the ID token for the cluster whose client ID is
// audience ("" for a token for kubectl only).
func (d *Dex) PasswordToken(ctx context.Context, email, password, audience string) (string, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, d.HTTPClient())
	cfg := d.oauth2Config("")
	cfg.Scopes = scopes(audience)
	tok, err := cfg.PasswordCredentialsToken(ctx, email, password)
	if err != nil {
		return "", fmt.Errorf("dex password grant: %w", err)
	}
	return idToken(tok)
}

// AuthCodeToken runs the browser flow without a browser: authorization
// code with PKCE S256 through the mock connector, redirecting to
// http://localhost:8000 as kubectl oidc-login does, and returns the ID
// token for audience.
func (d *Dex) AuthCodeToken(ctx context.Context, audience string) (string, error) {
	const redirect = "http://localhost:8000"
	cfg := d.oauth2Config(redirect)
	cfg.Scopes = scopes(audience)
	verifier := oauth2.GenerateVerifier()
	state := randomState()
	authURL := cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("connector_id", DexMockConnector))
	client := d.HTTPClient()
	client.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), redirect) {
			return http.ErrUseLastResponse
		}
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("dex auth request: %w", err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), redirect) {
		return "", fmt.Errorf("dex auth request: %s, no redirect to %s: %s", resp.Status, redirect, strings.TrimSpace(string(body)))
	}
	if loc.Query().Get("state") != state {
		return "", errors.New("dex auth request: state mismatch")
	}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, d.HTTPClient())
	tok, err := cfg.Exchange(ctx, loc.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		return "", fmt.Errorf("dex code exchange: %w", err)
	}
	return idToken(tok)
}

func idToken(tok *oauth2.Token) (string, error) {
	id, _ := tok.Extra("id_token").(string)
	if id == "" {
		return "", errors.New("dex returned no id_token")
	}
	return id, nil
}

func randomState() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
