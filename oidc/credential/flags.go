package credential

import (
	"fmt"

	"github.com/spf13/pflag"
)

// AddFlags adds the plugin's flags to fs, bound to c; Args renders a
// Config back into them, so a kubeconfig and the plugin always agree.
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.IssuerURL, "issuer-url", "", "OIDC issuer URL, as the cluster's AuthenticationConfiguration names it (required)")
	fs.StringVar(&c.ClientID, "client-id", "", "the cluster's public client ID, the audience the cluster accepts (required)")
	fs.StringArrayVar(&c.Scopes, "scope", nil, "scope to request besides openid, repeatable (default email, groups)")
	fs.Var((*grantValue)(&c.Grant), "grant", "sign-in: authcode (browser, loopback redirect) or device-code (RFC 8628)")
	fs.StringToStringVar(&c.ExtraParams, "auth-param", nil, "extra authorization request parameter key=value, repeatable")
	fs.BytesBase64Var(&c.CertificateAuthority, "certificate-authority-data", nil, "issuer CA, base64 PEM (default system roots)")
	fs.StringVar(&c.CacheDir, "cache-dir", "", "token cache directory (default <user cache dir>/tenantkit/oidc-credential)")
	fs.IntSliceVar(&c.RedirectPorts, "redirect-port", nil, "loopback redirect port, tried in order, repeatable (default 8000, 18000)")
	fs.DurationVar(&c.SignInTimeout, "sign-in-timeout", 0, "how long one sign-in may take (default 5m)")
	fs.IntVar(&c.MaxFailedSignIns, "max-failed-sign-ins", 0, "failed sign-ins in a row before backing off (default 3)")
}

type grantValue Grant

func (g *grantValue) String() string { return string(*g) }
func (g *grantValue) Type() string   { return "grant" }
func (g *grantValue) Set(s string) error {
	switch Grant(s) {
	case GrantAuthCode, GrantDeviceCode:
		*g = grantValue(s)
		return nil
	}
	return fmt.Errorf("unknown grant %q (want %s or %s)", s, GrantAuthCode, GrantDeviceCode)
}
