package etcdrelocate_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/etcdrelocate/etcdrelocatetest"
)

func sampleCheckpoint(t testing.TB) *etcdrelocate.Checkpoint {
	s := etcdrelocatetest.NewStateT(t, etcdrelocatetest.StateOptions{})
	p, err := etcdrelocate.PlanFor(s, request("etcd-1", etcdrelocatetest.NodeName(3)))
	require.NoError(t, err)
	cp := etcdrelocate.CheckpointFor(p)
	cp.Started = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	cp.SnapshotPath = "/var/backups/etcd.db"
	return cp
}

func TestCheckpointRoundTrip(t *testing.T) {
	cp := sampleCheckpoint(t)
	data, err := cp.Encode()
	require.NoError(t, err)
	require.Contains(t, string(data), `"memberID": "`+etcdrelocate.FormatID(etcdrelocatetest.MemberID(1)))
	require.Contains(t, string(data), `"layout": "statefulset"`)
	got, err := etcdrelocate.DecodeCheckpoint(data)
	require.NoError(t, err)
	require.Equal(t, cp, got)
}

func TestDecodeCheckpointRejects(t *testing.T) {
	for name, in := range map[string]string{
		"empty":         ``,
		"not json":      `{`,
		"unknown field": `{"version":1,"bogus":true}`,
		"zero id":       `{"version":1,"namespace":"n","cluster":"etcd","layout":"statefulset","memberID":"0","clusterID":"1","peerURL":"https://a:2380","voters":3,"pod":"etcd-0","pvc":"data-etcd-0","sourceNode":"a","targetNode":"b","phase":"running","options":{},"started":"2026-01-01T00:00:00Z"}`,
		"bad layout":    `{"version":1,"namespace":"n","cluster":"etcd","layout":"sts","memberID":"1","clusterID":"1","peerURL":"https://a:2380","voters":3,"pod":"etcd-0","pvc":"data-etcd-0","sourceNode":"a","targetNode":"b","phase":"running","options":{},"started":"2026-01-01T00:00:00Z"}`,
		"two voters":    `{"version":1,"namespace":"n","cluster":"etcd","layout":"statefulset","memberID":"1","clusterID":"1","peerURL":"https://a:2380","voters":2,"pod":"etcd-0","pvc":"data-etcd-0","sourceNode":"a","targetNode":"b","phase":"running","options":{},"started":"2026-01-01T00:00:00Z"}`,
		"bad url":       `{"version":1,"namespace":"n","cluster":"etcd","layout":"statefulset","memberID":"1","clusterID":"1","peerURL":"etcd-0:2380","voters":3,"pod":"etcd-0","pvc":"data-etcd-0","sourceNode":"a","targetNode":"b","phase":"running","options":{},"started":"2026-01-01T00:00:00Z"}`,
		"trailing":      `{"version":1} {}`,
	} {
		_, err := etcdrelocate.DecodeCheckpoint([]byte(in))
		require.ErrorIs(t, err, etcdrelocate.ErrInvalidCheckpoint, name)
	}
}

// FuzzDecodeCheckpoint checks that any input either fails with
// ErrInvalidCheckpoint or decodes to a checkpoint that survives a round
// trip.
func FuzzDecodeCheckpoint(f *testing.F) {
	data, err := sampleCheckpoint(f).Encode()
	require.NoError(f, err)
	f.Add(data)
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, in []byte) {
		cp, err := etcdrelocate.DecodeCheckpoint(in)
		if err != nil {
			require.ErrorIs(t, err, etcdrelocate.ErrInvalidCheckpoint)
			return
		}
		out, err := cp.Encode()
		require.NoError(t, err)
		again, err := etcdrelocate.DecodeCheckpoint(out)
		require.NoError(t, err)
		require.Equal(t, cp, again)
	})
}
