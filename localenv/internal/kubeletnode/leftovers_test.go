package kubeletnode

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/internal/process"
)

func TestParseRecord(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{`{"pid":12,"start":5,"cgroup":"tenantkit/12-env","dir":"/tmp/env/nodes"}`, true},
		{`{"pid":12,"start":5,"cgroup":"tenantkit/12-env"}`, true},
		{`{"pid":12,"cgroup":"tenantkit"}`, false},
		{`{"pid":12,"cgroup":"tenantkit/"}`, false},
		{`{"pid":12,"cgroup":"tenantkit/.."}`, false},
		{`{"pid":12,"cgroup":"tenantkit/a/b"}`, false},
		{`{"pid":12,"cgroup":"system.slice/x"}`, false},
		{`{"pid":0,"cgroup":"tenantkit/x"}`, false},
		{`{"pid":12,"cgroup":"tenantkit/x","dir":"relative"}`, false},
		{`{"pid":12,"cgroup":"tenantkit/x","dir":"/"}`, false},
		{`not json`, false},
	} {
		_, err := parseRecord([]byte(tc.in))
		if tc.ok {
			require.NoError(t, err, tc.in)
		} else {
			require.ErrorIs(t, err, errBadRecord, tc.in)
		}
	}
}

func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(`{"pid":12,"start":5,"cgroup":"tenantkit/12-env","dir":"/tmp/env/nodes"}`))
	f.Add([]byte(`{"pid":12,"cgroup":"tenantkit/.."}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseRecord(b)
		if err != nil {
			require.ErrorIs(t, err, errBadRecord)
			return
		}
		// Whatever parses keeps cleanup inside one tenantkit cgroup.
		require.Regexp(t, `^tenantkit/[^/\x00]+$`, r.Cgroup)
		require.NotContains(t, []string{"tenantkit/.", "tenantkit/.."}, r.Cgroup)
		require.Positive(t, r.PID)
	})
}

func TestStartTime_ofThisProcess(t *testing.T) {
	a, err := process.StartTime(os.Getpid())
	require.NoError(t, err)
	require.Positive(t, a)
	r := record{PID: os.Getpid(), Start: a}
	require.True(t, r.alive())
	r.Start++
	require.False(t, r.alive(), "a reused PID is not the owner")
}

func TestHierarchies(t *testing.T) {
	roots, err := hierarchies()
	if err != nil {
		t.Skip(err)
	}
	for _, r := range roots {
		require.DirExists(t, r)
	}
}
