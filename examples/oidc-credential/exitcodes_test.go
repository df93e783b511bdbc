package main

import (
	"bytes"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/internal/exitcodetest"
)

// TestMain lets the tests run this test binary as the plugin itself
// (kubectl's exec, client-go's exec authenticator): with
// TENANTKIT_OIDC_CREDENTIAL_MAIN=1 it is the program.
func TestMain(m *testing.M) {
	if os.Getenv("TENANTKIT_OIDC_CREDENTIAL_MAIN") == "1" {
		main()
		return
	}
	exitcodetest.Main(m, main) // and runs TestExitCodes' cases as the program
}

// TestExitCodes runs the program over every class of bad input and
// checks the exit code, the first line of stderr and that stdout, the
// ExecCredential kubectl reads, stays empty.
func TestExitCodes(t *testing.T) {
	t.Setenv("KUBERNETES_EXEC_INFO", "")
	closed := "https://127.0.0.1:" + strconv.Itoa(freePort(t))
	iss := newDiscoveryServer(t)
	issCA := "--certificate-authority-data=" + base64.StdEncoding.EncodeToString(iss.ca)
	cache := func() []string { return []string{"--cache-dir", t.TempDir()} }
	getToken := func(extra ...string) []string {
		return append(append([]string{"get-token", "--issuer-url", iss.url, "--client-id", "c", issCA}, cache()...), extra...)
	}
	execInfo := func(interactive bool) []string {
		return []string{`KUBERNETES_EXEC_INFO={"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":` + strconv.FormatBool(interactive) + `}}`}
	}
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600))
	kc := []string{"kubeconfig", "-n", "tenant-a", "--cluster", "prod", "--server", "https://k.example.org", "--issuer-url", "https://i.example.org"}
	exitcodetest.Run(t, cli.Execute, func(stdout *bytes.Buffer) *cobra.Command { return newCommand(stdout, io.Discard) }, []exitcodetest.Case{
		{Name: "no command", Args: nil, Code: cli.ExitUsage, First: "oidc-credential: a command is required: get-token, logout or kubeconfig"},
		{Name: "stray argument", Args: []string{"nope"}, Code: cli.ExitUsage, First: `oidc-credential: unknown command "nope" for "oidc-credential"`},
		{Name: "no issuer", Args: append([]string{"get-token"}, cache()...), Code: cli.ExitUsage, First: "oidc-credential: --issuer-url and --client-id are required"},
		{Name: "logout without issuer", Args: append([]string{"logout"}, cache()...), Code: cli.ExitUsage, First: "oidc-credential: --issuer-url and --client-id are required"},
		{Name: "unknown grant", Args: []string{"get-token", "--grant", "password"}, Code: cli.ExitUsage, First: `oidc-credential: invalid argument "password" for "--grant" flag: unknown grant "password" (want authcode or device-code)`},
		{Name: "issuer URL not https", Args: append([]string{"get-token", "--issuer-url", "http://i.example.org", "--client-id", "c"}, cache()...), Code: cli.ExitUsage,
			First: `oidc-credential: --issuer-url "http://i.example.org" is not an https URL`},
		{Name: "issuer URL no URL", Args: append([]string{"get-token", "--issuer-url", "keycloak", "--client-id", "c"}, cache()...), Code: cli.ExitUsage,
			First: `oidc-credential: --issuer-url "keycloak" is not an https URL`},
		{Name: "negative sign-in timeout", Args: getToken("--sign-in-timeout", "-1s"), Code: cli.ExitUsage, First: "oidc-credential: --sign-in-timeout -1s is negative"},
		{Name: "redirect port out of range", Args: getToken("--redirect-port", "70000"), Code: cli.ExitUsage, First: "oidc-credential: --redirect-port 70000 is no TCP port"},
		{Name: "CA data not PEM", Args: append([]string{"get-token", "--issuer-url", iss.url, "--client-id", "c", "--certificate-authority-data", "aGVsbG8="}, cache()...), Code: cli.ExitUsage,
			First: "oidc-credential: --certificate-authority-data holds no PEM certificate"},
		{Name: "unreachable issuer", Args: append([]string{"get-token", "--issuer-url", closed, "--client-id", "c"}, cache()...), Code: cli.ExitUnavailable,
			First: "oidc-credential: credential: issuer " + closed + ": discovery: Get \"" + closed + "/.well-known/openid-configuration\": dial tcp "},
		{Name: "issuer answers with an error", Args: append([]string{"get-token", "--issuer-url", iss.url + "/broken", "--client-id", "c", issCA}, cache()...), Code: cli.ExitFailure,
			First: "oidc-credential: credential: issuer " + iss.url + "/broken: discovery: answered with an error: 404 Not Found"},
		{Name: "non-interactive, nothing cached", Args: getToken(), Env: execInfo(false), Code: cli.ExitFailure,
			First: "oidc-credential: credential: sign-in needed, but the caller is not interactive: no cached or refreshable token for client c"},
		{Name: "sign-in timeout", Args: getToken("--sign-in-timeout", "1s", "--redirect-port", strconv.Itoa(freePort(t))), Env: execInfo(true), Code: cli.ExitFailure,
			First: "Sign in to " + iss.url + " (client c) in a browser:", Stderr: "\noidc-credential: credential: sign-in timed out: not finished within 1s\n"},
		{Name: "interrupted", Ctx: exitcodetest.Cancelled(), Args: getToken(), Code: cli.ExitInterrupted, First: "oidc-credential: interrupted"},
		{Name: "kubeconfig without cluster", Args: []string{"kubeconfig", "--server", "https://x"}, Code: cli.ExitUsage, First: "oidc-credential: --namespace and --cluster are required"},
		{Name: "kubeconfig without server", Args: []string{"kubeconfig", "-n", "t", "--cluster", "c"}, Code: cli.ExitUsage, First: "oidc-credential: --server and --issuer-url are required"},
		{Name: "kubeconfig server not a URL", Args: append(kc, "--server", "k.example.org"), Code: cli.ExitUsage, First: `oidc-credential: --server "k.example.org" is not an https URL`},
		{Name: "kubeconfig server http", Args: append(kc, "--server", "http://k.example.org"), Code: cli.ExitUsage, First: `oidc-credential: --server "http://k.example.org" is not an https URL`},
		{Name: "kubeconfig issuer not https", Args: append(kc, "--issuer-url", "http://i"), Code: cli.ExitUsage, First: `oidc-credential: --issuer-url "http://i" is not an https URL`},
		{Name: "kubeconfig namespace not DNS-1123", Args: append(kc, "-n", "Tenant_A"), Code: cli.ExitUsage, First: `oidc-credential: --namespace "Tenant_A": a lowercase RFC 1123 label`},
		{Name: "kubeconfig CA missing", Args: append(kc, "--certificate-authority", filepath.Join(dir, "absent.pem")), Code: cli.ExitUsage, First: "oidc-credential: --certificate-authority: open "},
		{Name: "kubeconfig CA not PEM", Args: append(kc, "--issuer-certificate-authority", notPEM), Code: cli.ExitUsage,
			First: "oidc-credential: --issuer-certificate-authority " + notPEM + ": not a PEM file of certificates"},
		{Name: "kubeconfig unknown plugin", Args: append(kc, "--plugin", "pinniped"), Code: cli.ExitUsage, First: `oidc-credential: --plugin "pinniped": want one of "tenantkit", "kubelogin"`},
		{Name: "kubeconfig", Args: kc, Code: cli.ExitOK, Stdout: "server: https://k.example.org"},
	})
}

// freePort returns a loopback port nothing listens on (now).
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// discoveryServer is an issuer that answers discovery and nothing else:
// enough to reach the point where a sign-in would start. Under /broken
// it answers 404.
type discoveryServer struct {
	url string
	ca  []byte
}

func newDiscoveryServer(t *testing.T) discoveryServer {
	var srv *httptest.Server
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/openid-configuration" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":"%[1]s/auth","token_endpoint":"%[1]s/token","jwks_uri":"%[1]s/keys","id_token_signing_alg_values_supported":["RS256"]}`, srv.URL)
	}))
	t.Cleanup(srv.Close)
	return discoveryServer{url: srv.URL, ca: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}
}

// TestExecInfo: another exec API version than v1 is refused.
func TestExecInfo(t *testing.T) {
	t.Setenv("KUBERNETES_EXEC_INFO", `{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","spec":{}}`)
	var stdout bytes.Buffer
	cmd := newCommand(&stdout, io.Discard)
	cmd.SetArgs([]string{"get-token", "--issuer-url", "https://127.0.0.1:1", "--client-id", "c", "--cache-dir", t.TempDir()})
	code := cli.Execute(t.Context(), cmd)
	if code != cli.ExitUsage || stdout.Len() != 0 {
		t.Fatalf("exit %d, stdout %q", code, stdout.String())
	}
}
