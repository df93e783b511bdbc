package examplecli

import (
	"fmt"
	"os"
	"path/filepath"
)

// BadKubeconfigs are kubeconfig files for the exit-code tests of the
// examples: one that is missing, one that is not YAML, and one whose
// cluster does not answer (nothing listens on port 1 of the loopback).
type BadKubeconfigs struct {
	Missing, Garbled, Unreachable string
}

// WriteBadKubeconfigs writes them under dir.
func WriteBadKubeconfigs(dir string) (BadKubeconfigs, error) {
	k := BadKubeconfigs{
		Missing:     filepath.Join(dir, "missing.kubeconfig"),
		Garbled:     filepath.Join(dir, "garbled.kubeconfig"),
		Unreachable: filepath.Join(dir, "unreachable.kubeconfig"),
	}
	if err := os.WriteFile(k.Garbled, []byte("apiVersion: v1\nkind: Config\nclusters: {{{\n"), 0o600); err != nil {
		return k, err
	}
	unreachable := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(k.Unreachable, []byte(unreachable), 0o600); err != nil {
		return k, fmt.Errorf("write kubeconfig: %w", err)
	}
	return k, nil
}
