package credential

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"time"
)

// Grant is how Get signs a user in when neither the cache nor a refresh
// gives a token.
type Grant string

const (
	// GrantAuthCode is the authorization code grant with PKCE S256 and a
	// redirect to a loopback port (8000, then 18000): for a machine with a
	// browser. The default.
	GrantAuthCode Grant = "authcode"
	// GrantDeviceCode is the device authorization grant (RFC 8628) with
	// PKCE S256: the user opens a URL and types a code on any device.
	GrantDeviceCode Grant = "device-code"
)

// defaultRedirectPorts are the loopback ports the authorization code
// grant tries, in order: the ones Cozystack registers for each cluster's
// client (http://localhost:8000 and http://localhost:18000).
var defaultRedirectPorts = []int{8000, 18000}

// defaultScopes are the scopes requested besides openid when
// Config.Scopes is nil: what the cluster's AuthenticationConfiguration
// maps (email, groups).
var defaultScopes = []string{"email", "groups"}

// Config is what Get needs to return a cluster's ID token. IssuerURL and
// ClientID are required; the zero value of every other field is the safe
// default.
type Config struct {
	// IssuerURL is the OIDC issuer, exactly as the cluster's
	// AuthenticationConfiguration names it.
	IssuerURL string
	// ClientID is the cluster's public client, whose ID is the audience
	// the cluster accepts (Cozystack: <namespace>-kubernetes-<cluster>).
	ClientID string
	// Scopes are requested besides openid; nil means email and groups,
	// what the cluster's AuthenticationConfiguration maps. Add
	// offline_access where the issuer gives refresh tokens only for it
	// (dex).
	Scopes []string
	// Grant is the sign-in; empty means GrantAuthCode.
	Grant Grant
	// ExtraParams are added to the authorization (or device
	// authorization) request, for example connector_id or prompt.
	ExtraParams map[string]string
	// CertificateAuthority is the issuer's CA (PEM); nil means the system
	// roots.
	CertificateAuthority []byte
	// HTTPClient, when set, is used for every request to the issuer
	// instead of one built from CertificateAuthority.
	HTTPClient *http.Client
	// CacheDir holds the cache; empty means tenantkit/oidc-credential
	// under os.UserCacheDir.
	CacheDir string
	// RedirectPorts are the loopback ports of the authorization code
	// grant, tried in order; nil means 8000 then 18000, the ones Cozystack
	// registers for each cluster's client.
	RedirectPorts []int
	// Browser, when set, is called with the URL the user must open (the
	// authorization URL, or the device verification URL). Nil means the
	// URL is only printed. See CommandBrowser.
	Browser func(url string) error
	// Prompt receives the sign-in instructions (the URL, the device code);
	// nil means os.Stderr. It never receives a token.
	Prompt io.Writer
	// SignInTimeout bounds one sign-in; zero means 5 minutes.
	SignInTimeout time.Duration
	// NonInteractive, when set, makes Get return ErrInteractionRequired
	// where it would start a sign-in: for a caller that nobody watches
	// (kubectl says so in KUBERNETES_EXEC_INFO's spec.interactive).
	NonInteractive bool
	// MaxFailedSignIns is how many sign-ins may fail in a row before Get
	// backs off (30 s, doubling, at most 15 minutes); zero means 3.
	MaxFailedSignIns int
	// Logger receives debug and info records; nil means none.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (c Config) withDefaults() (Config, error) {
	if c.IssuerURL == "" || c.ClientID == "" {
		return c, invalidf("IssuerURL and ClientID are required")
	}
	switch c.Grant {
	case "":
		c.Grant = GrantAuthCode
	case GrantAuthCode, GrantDeviceCode:
	default:
		return c, invalidf("unknown grant %q (want %s or %s)", c.Grant, GrantAuthCode, GrantDeviceCode)
	}
	if c.Scopes == nil {
		c.Scopes = defaultScopes
	}
	if c.RedirectPorts == nil {
		c.RedirectPorts = defaultRedirectPorts
	}
	if c.Prompt == nil {
		c.Prompt = os.Stderr
	}
	if c.SignInTimeout < 0 || c.MaxFailedSignIns < 0 {
		return c, invalidf("negative SignInTimeout or MaxFailedSignIns")
	}
	if c.SignInTimeout == 0 {
		c.SignInTimeout = 5 * time.Minute
	}
	if c.MaxFailedSignIns == 0 {
		c.MaxFailedSignIns = 3
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.CacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return c, invalidf("no CacheDir and no user cache directory: %v", err)
		}
		c.CacheDir = filepath.Join(dir, "tenantkit", "oidc-credential")
	}
	if c.HTTPClient == nil {
		hc, err := httpClient(c.CertificateAuthority)
		if err != nil {
			return c, err
		}
		c.HTTPClient = hc
	}
	return c, nil
}

func httpClient(caPEM []byte) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if len(caPEM) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, invalidf("CertificateAuthority holds no PEM certificate")
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}, nil
}

// scopes returns the requested scopes: openid first, then the others
// deduplicated in order.
func (c Config) scopes() []string {
	out := []string{"openid"}
	for _, s := range c.Scopes {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Key is the cache key of c: a SHA-256 over everything that changes the
// token (issuer, client, scopes, grant, extra parameters and the issuer's
// CA), so that two configurations never share a cached token. Call it on
// a Config with defaults applied.
func (c Config) key() string {
	scopes := c.scopes()
	sort.Strings(scopes)
	params := make([][2]string, 0, len(c.ExtraParams))
	for k, v := range c.ExtraParams {
		params = append(params, [2]string{k, v})
	}
	sort.Slice(params, func(i, j int) bool { return params[i][0] < params[j][0] })
	ca := sha256.Sum256(c.CertificateAuthority)
	data, _ := json.Marshal([]any{"v1", c.IssuerURL, c.ClientID, scopes, string(c.Grant), params, hex.EncodeToString(ca[:])})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Args renders c as the arguments of the credential plugin
// (examples/oidc-credential get-token, see AddFlags), for a kubeconfig's
// exec block. Fields without a flag (HTTPClient, Browser, Prompt, Logger,
// Now) are left out.
func (c Config) Args() []string {
	args := []string{"--issuer-url=" + c.IssuerURL, "--client-id=" + c.ClientID}
	scopes := c.Scopes
	if scopes == nil {
		scopes = defaultScopes
	}
	for _, s := range scopes {
		args = append(args, "--scope="+s)
	}
	if c.Grant != "" {
		args = append(args, "--grant="+string(c.Grant))
	}
	keys := make([]string, 0, len(c.ExtraParams))
	for k := range c.ExtraParams {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--auth-param="+k+"="+c.ExtraParams[k])
	}
	if len(c.CertificateAuthority) > 0 {
		args = append(args, "--certificate-authority-data="+base64.StdEncoding.EncodeToString(c.CertificateAuthority))
	}
	if c.CacheDir != "" {
		args = append(args, "--cache-dir="+c.CacheDir)
	}
	for _, p := range c.RedirectPorts {
		args = append(args, "--redirect-port="+strconv.Itoa(p))
	}
	if c.SignInTimeout != 0 {
		args = append(args, "--sign-in-timeout="+c.SignInTimeout.String())
	}
	if c.MaxFailedSignIns != 0 {
		args = append(args, fmt.Sprintf("--max-failed-sign-ins=%d", c.MaxFailedSignIns))
	}
	return args
}
