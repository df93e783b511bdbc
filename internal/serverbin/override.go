package serverbin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// ErrIncompatible is returned for an override binary whose version the
// local environment cannot run: another major version than the pinned one,
// or older than the server's MinVersion.
var ErrIncompatible = errors.New("serverbin: incompatible binary")

// ErrBadOverride is returned when an override names a file that is not
// there or cannot be executed.
var ErrBadOverride = errors.New("serverbin: override binary unusable")

// KubebuilderAssetsEnv is envtest's variable naming the folder of its
// binaries (etcd, kube-apiserver, kubectl), as `setup-envtest use -p path`
// prints it.
const KubebuilderAssetsEnv = "KUBEBUILDER_ASSETS"

// Override returns the binary the environment variables choose for s, and
// which variable chose it. In order:
//
//  1. $TENANTKIT_<NAME>_BIN (Server.EnvVar);
//  2. with envtest, $TEST_ASSET_<NAME> (Server.EnvtestVar), as envtest reads it;
//  3. with envtest, <name> in the folder $KUBEBUILDER_ASSETS, when there.
//
// envtest is false where a binary of tenantkit's own build is required (the
// etcd of simulated pods resolves cluster names through
// TENANTKIT_DNS_SERVER and moves its wildcard listen URLs to its node's
// loopback address with TENANTKIT_LISTEN_HOST; upstream etcd ignores both).
// ok is false when no variable names a binary: the caller builds one.
func Override(s Server, envtest bool) (path, source string, ok bool) {
	if p := os.Getenv(s.EnvVar()); p != "" {
		return p, s.EnvVar(), true
	}
	if !envtest {
		return "", "", false
	}
	if p := os.Getenv(s.EnvtestVar()); p != "" {
		return p, s.EnvtestVar(), true
	}
	if dir := os.Getenv(KubebuilderAssetsEnv); dir != "" {
		p := filepath.Join(dir, s.Name)
		if fileExists(p) {
			return p, KubebuilderAssetsEnv, true
		}
	}
	return "", "", false
}

// CheckBinary checks an override binary for s: the file must be an
// executable, and the version it reports (see Version) compatible with the
// pinned one (see Compatible). It returns that version, "" when s has no
// version command or the output names none (then nothing is refused).
func CheckBinary(ctx context.Context, s Server, path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrBadOverride, s.Name, err)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%w: %s: %s is not an executable file", ErrBadOverride, s.Name, path)
	}
	v, err := Version(ctx, s, path)
	if err != nil || v == "" {
		return "", nil // unknown: run it and let its start-up tell
	}
	return v, Compatible(s, v)
}

// versionPattern finds the first version number in a version command's
// output: "Kubernetes v1.37.2", "etcd Version: 3.7.3", "dex v2.45.1",
// "Version: v1.18.3".
var versionPattern = regexp.MustCompile(`\bv?(\d+)\.(\d+)(?:\.(\d+))?`)

// Version runs the binary's version command (Server.VersionArgs, bounded to
// 10 seconds) and returns the version it prints, as "v1.37.2"; "" when s
// has no version command or the output names no version.
func Version(ctx context.Context, s Server, path string) (string, error) {
	if len(s.VersionArgs) == 0 {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, s.VersionArgs...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("serverbin: %s %v: %w", path, s.VersionArgs, err)
	}
	m := versionPattern.FindSubmatch(out)
	if m == nil {
		return "", nil
	}
	patch := string(m[3])
	if patch == "" {
		patch = "0"
	}
	return fmt.Sprintf("v%s.%s.%s", m[1], m[2], patch), nil
}

// Compatible returns nil when version (as Version returns it) can stand in
// for s: the same major version as s.Version and not older than
// s.MinVersion. Other differences are allowed; the caller may warn.
func Compatible(s Server, version string) error {
	got, ok := parseVersion(version)
	want, ok2 := parseVersion(s.Version)
	if !ok || !ok2 {
		return nil
	}
	if got[0] != want[0] {
		return fmt.Errorf("%w: %s is %s, the local environment runs major version %d (pinned %s)", ErrIncompatible, s.Name, version, want[0], s.Version)
	}
	if oldest, ok := parseVersion(s.MinVersion); ok && less(got, oldest) {
		return fmt.Errorf("%w: %s is %s, older than %s, the oldest the local environment can run", ErrIncompatible, s.Name, version, s.MinVersion)
	}
	return nil
}

// parseVersion reads "v1.37.2" or "3.7.3"; ok is false for anything else.
func parseVersion(v string) (ver [3]int, ok bool) {
	m := versionPattern.FindStringSubmatch(v)
	if m == nil {
		return ver, false
	}
	for i := range 3 {
		if m[i+1] != "" {
			ver[i], _ = strconv.Atoi(m[i+1])
		}
	}
	return ver, true
}

func less(a, b [3]int) bool {
	for i := range 3 {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
