package credential

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientauthv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
)

// execInfoEnv is the environment variable kubectl passes the
// ExecCredential request in.
const execInfoEnv = "KUBERNETES_EXEC_INFO"

// execAPIVersion is the only exec credential API the plugin speaks.
var execAPIVersion = clientauthv1.SchemeGroupVersion.String()

// ReadExecInfo decodes the ExecCredential kubectl passes in
// KUBERNETES_EXEC_INFO. Unset (the plugin run by hand) gives nil and no
// error; another apiVersion than client.authentication.k8s.io/v1 is
// ErrInvalidConfig.
func ReadExecInfo() (*clientauthv1.ExecCredential, error) {
	raw := os.Getenv(execInfoEnv)
	if raw == "" {
		return nil, nil
	}
	return parseExecInfo([]byte(raw))
}

// parseExecInfo decodes the value of KUBERNETES_EXEC_INFO.
func parseExecInfo(raw []byte) (*clientauthv1.ExecCredential, error) {
	var ec clientauthv1.ExecCredential
	if err := json.Unmarshal(raw, &ec); err != nil {
		return nil, invalidf("%s: %v", execInfoEnv, err)
	}
	if ec.APIVersion != execAPIVersion || ec.Kind != "ExecCredential" {
		return nil, invalidf("%s is %s %s, want %s ExecCredential (set apiVersion %s in the kubeconfig's exec block)",
			execInfoEnv, ec.APIVersion, ec.Kind, execAPIVersion, execAPIVersion)
	}
	return &ec, nil
}

// execCredential is tok as kubectl expects it from a credential plugin:
// the ID token as bearer token and its expiry, after which kubectl runs
// the plugin again.
func execCredential(tok *Token) *clientauthv1.ExecCredential {
	exp := metav1.NewTime(tok.Expiry)
	return &clientauthv1.ExecCredential{
		TypeMeta: metav1.TypeMeta{APIVersion: execAPIVersion, Kind: "ExecCredential"},
		Status:   &clientauthv1.ExecCredentialStatus{Token: tok.IDToken, ExpirationTimestamp: &exp},
	}
}

// WriteExecCredential writes tok as an ExecCredential in JSON to w: the ID
// token as bearer token and its expiry, after which kubectl runs the plugin
// again. w must be the plugin's stdout: kubectl reads it there, and nothing
// else may ever see the token.
func WriteExecCredential(w io.Writer, tok *Token) error {
	return json.NewEncoder(w).Encode(execCredential(tok))
}

// CommandBrowser returns a Config.Browser that runs name with args and
// the URL as last argument (for example "xdg-open"), and does not wait
// for it. Its output goes to stderr, never to stdout, which kubectl reads.
func CommandBrowser(name string, args ...string) func(url string) error {
	return func(url string) error {
		cmd := exec.Command(name, append(append([]string{}, args...), url)...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start %s: %w", name, err)
		}
		go func() { _ = cmd.Wait() }()
		return nil
	}
}
