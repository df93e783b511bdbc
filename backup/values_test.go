package backup_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/tenantkit/backup"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
}

func TestAddonValues(t *testing.T) {
	creds := backup.Credentials{Bucket: "bucket-91bbb59f", Endpoint: "s3.example.org", AccessKeyID: "AK", SecretAccessKey: "SK"}
	v, err := backup.AddonValues(creds, backup.ValuesOptions{})
	require.NoError(t, err)
	out, err := v.YAML()
	require.NoError(t, err)
	golden(t, "values", out)
	override, err := v.Override()
	require.NoError(t, err)
	fromOverride, err := yaml.Marshal(override)
	require.NoError(t, err)
	require.Equal(t, string(out), string(fromOverride), "valuesOverride holds exactly the values")
	require.NotContains(t, v.String(), "SK")

	v, err = backup.AddonValues(creds, backup.ValuesOptions{Prefix: "velero", Region: "eu-1", LocationName: "primary"})
	require.NoError(t, err)
	out, err = v.YAML()
	require.NoError(t, err)
	golden(t, "values-prefix", out)

	_, err = backup.AddonValues(creds, backup.ValuesOptions{Prefix: "/abs"})
	require.ErrorIs(t, err, backup.ErrInvalidPrefix)
	_, err = backup.AddonValues(backup.Credentials{Bucket: "b"}, backup.ValuesOptions{})
	require.ErrorIs(t, err, backup.ErrInvalidConfig)
}

func TestValidatePrefix(t *testing.T) {
	for _, p := range []string{"", "velero", "tenants/a/velero"} {
		require.NoError(t, backup.ValidatePrefix(p), p)
	}
	for _, p := range []string{"/velero", "velero/", "a//b", "a/../b", ".", "a\x00b", `a\b`} {
		require.ErrorIs(t, backup.ValidatePrefix(p), backup.ErrInvalidPrefix, p)
	}
	require.Equal(t, []string{"photos", "tmp"}, backup.ForeignFolders([]string{"backups/", "tmp/", "kopia/", "photos/", "restores/"}))
}
