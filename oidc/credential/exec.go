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

// ExecInfoEnv is the environment variable kubectl passes the
// ExecCredential request in.
const ExecInfoEnv = "KUBERNETES_EXEC_INFO"

// ExecAPIVersion is the only exec credential API the plugin speaks.
var ExecAPIVersion = clientauthv1.SchemeGroupVersion.String()

// ReadExecInfo decodes the ExecCredential kubectl passes in
// KUBERNETES_EXEC_INFO. Unset (the plugin run by hand) gives nil and no
// error; another apiVersion than client.authentication.k8s.io/v1 is
// ErrInvalidConfig.
func ReadExecInfo() (*clientauthv1.ExecCredential, error) {
	raw := os.Getenv(ExecInfoEnv)
	if raw == "" {
		return nil, nil
	}
	return parseExecInfo([]byte(raw))
}

// parseExecInfo decodes the value of KUBERNETES_EXEC_INFO.
func parseExecInfo(raw []byte) (*clientauthv1.ExecCredential, error) {
	var ec clientauthv1.ExecCredential
	if err := json.Unmarshal(raw, &ec); err != nil {
		return nil, invalidf("%s: %v", ExecInfoEnv, err)
	}
	if ec.APIVersion != ExecAPIVersion || ec.Kind != "ExecCredential" {
		return nil, invalidf("%s is %s %s, want %s ExecCredential (set apiVersion %s in the kubeconfig's exec block)",
			ExecInfoEnv, ec.APIVersion, ec.Kind, ExecAPIVersion, ExecAPIVersion)
	}
	return &ec, nil
}

// ExecCredential is tok as kubectl expects it from a credential plugin:
// the ID token as bearer token and its expiry, after which kubectl runs
// the plugin again.
func ExecCredential(tok *Token) *clientauthv1.ExecCredential {
	exp := metav1.NewTime(tok.Expiry)
	return &clientauthv1.ExecCredential{
		TypeMeta: metav1.TypeMeta{APIVersion: ExecAPIVersion, Kind: "ExecCredential"},
		Status:   &clientauthv1.ExecCredentialStatus{Token: tok.IDToken, ExpirationTimestamp: &exp},
	}
}

// WriteExecCredential writes ExecCredential(tok) as JSON to w, which must
// be the plugin's stdout: kubectl reads it there, and nothing else may
// ever see the token.
func WriteExecCredential(w io.Writer, tok *Token) error {
	return json.NewEncoder(w).Encode(ExecCredential(tok))
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
