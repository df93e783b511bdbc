package main

import (
	"bytes"
	"io"
	"net"
	"os"
	"strconv"
	"testing"

	"github.com/spf13/cobra"

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
	os.Exit(m.Run())
}

// TestExitCodes runs command lines that need no server and checks the exit
// code and the first line of stderr of each.
func TestExitCodes(t *testing.T) {
	t.Setenv("KUBERNETES_EXEC_INFO", "")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "https://" + l.Addr().String()
	l.Close()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	cache := []string{"--cache-dir", t.TempDir()}
	exitcodetest.Run(t, cli.Execute, func(stdout *bytes.Buffer) *cobra.Command { return newCommand(stdout, io.Discard) }, []exitcodetest.Case{
		{Name: "no command", Args: nil, Code: cli.ExitUsage, First: "oidc-credential: a command is required: get-token, logout or kubeconfig"},
		{Name: "stray argument", Args: []string{"nope"}, Code: cli.ExitUsage, First: `oidc-credential: unknown command "nope" for "oidc-credential"`},
		{Name: "no issuer", Args: append([]string{"get-token"}, cache...), Code: cli.ExitUsage, First: "oidc-credential: credential: invalid configuration: IssuerURL and ClientID are required"},
		{Name: "unknown grant", Args: []string{"get-token", "--grant", "password"}, Code: cli.ExitUsage, First: `oidc-credential: invalid argument "password" for "--grant" flag: unknown grant "password" (want authcode or device-code)`},
		{Name: "unreachable issuer", Args: append([]string{"get-token", "--issuer-url", closed, "--client-id", "c"}, cache...), Code: cli.ExitUnavailable,
			First: "oidc-credential: credential: issuer " + closed + ": discovery: Get \"" + closed + "/.well-known/openid-configuration\": dial tcp 127.0.0.1:" + port + ": connect: connection refused"},
		{Name: "kubeconfig without cluster", Args: []string{"kubeconfig", "--server", "https://x"}, Code: cli.ExitUsage, First: "oidc-credential: --namespace and --cluster are required"},
		{Name: "kubeconfig unknown plugin", Args: []string{"kubeconfig", "-n", "t", "--cluster", "c", "--server", "https://x", "--issuer-url", "https://i", "--plugin", "pinniped"},
			Code: cli.ExitUsage, First: `oidc-credential: oidc: invalid config: unknown credential plugin "pinniped" (want kubelogin or tenantkit)`},
	})
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
