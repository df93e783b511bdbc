package gpushare_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/gpushare"
)

func TestPodDevicesGolden(t *testing.T) {
	dev := func(uuid string, mem, cores int32) gpushare.DeviceAllocation {
		return gpushare.DeviceAllocation{UUID: uuid, Type: gpushare.VendorNVIDIA, MemoryMiB: mem, Cores: cores}
	}
	for _, tc := range []struct {
		name  string
		value string
		want  gpushare.PodAllocation
	}{
		// research/hami.md §4.2 worked examples.
		{"one container, 3000 MiB, 30 cores", "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,NVIDIA,3000,30:;",
			gpushare.PodAllocation{{dev("GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448", 3000, 30)}}},
		{"two containers, 50 % resolved on 32 GiB", "GPU-aaaa,NVIDIA,8000,0:GPU-bbbb,NVIDIA,8000,0:;GPU-aaaa,NVIDIA,16384,0:;",
			gpushare.PodAllocation{{dev("GPU-aaaa", 8000, 0), dev("GPU-bbbb", 8000, 0)}, {dev("GPU-aaaa", 16384, 0)}}},
		{"consumed to-allocate", ";;", gpushare.PodAllocation{{}, {}}},
		{"exclusive whole card", "GPU-cccc,NVIDIA,81920,100:;", gpushare.PodAllocation{{dev("GPU-cccc", 81920, 100)}}},
		{"init container without GPU first", ";GPU-a,NVIDIA,1024,10:;", gpushare.PodAllocation{{}, {dev("GPU-a", 1024, 10)}}},
		{"legacy MIG suffix", "GPU-xxxx[2-0],NVIDIA,20480,0:;", gpushare.PodAllocation{{dev("GPU-xxxx[2-0]", 20480, 0)}}},
		{"empty", "", gpushare.PodAllocation{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := gpushare.DecodePodDevices(tc.value)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.value, gpushare.EncodePodDevices(got))
			require.Equal(t, tc.value, got.String())
		})
	}
	require.Equal(t, "GPU-xxxx", dev("GPU-xxxx[2-0]", 1, 0).DeviceID())
}

func TestPodDevicesLenient(t *testing.T) {
	// HAMi ignores fields past the fourth and empty device segments; a
	// missing final ';' still reads as one container.
	got, err := gpushare.DecodePodDevices("GPU-a,NVIDIA,10,1,extra::GPU-b,NVIDIA,20,2:")
	require.NoError(t, err)
	require.Equal(t, gpushare.PodAllocation{{
		{UUID: "GPU-a", Type: "NVIDIA", MemoryMiB: 10, Cores: 1},
		{UUID: "GPU-b", Type: "NVIDIA", MemoryMiB: 20, Cores: 2},
	}}, got)
	require.Len(t, got.Devices(), 2)
}

func TestPodDevicesMalformed(t *testing.T) {
	for name, value := range map[string]string{
		"three fields":     "GPU-a,NVIDIA,10:;",
		"no UUID":          ",NVIDIA,10,1:;",
		"no type":          "GPU-a,,10,1:;",
		"memory not int":   "GPU-a,NVIDIA,1.5,1:;",
		"negative cores":   "GPU-a,NVIDIA,10,-1:;",
		"memory overflow":  "GPU-a,NVIDIA,4294967296,1:;",
		"open MIG suffix":  "GPU-a[1-0,NVIDIA,10,1:;",
		"suffix only UUID": "[1-0],NVIDIA,10,1:;",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := gpushare.DecodePodDevices(value)
			require.ErrorIs(t, err, gpushare.ErrMalformedAnnotation)
		})
	}
}

func TestHandshake(t *testing.T) {
	loc := time.FixedZone("CEST", 2*3600)
	for _, tc := range []struct {
		value string
		want  gpushare.Handshake
		again string // re-encoded; "" means value
	}{
		{"Requesting_2026-08-21 10:00:00", gpushare.Handshake{State: gpushare.HandshakeRequesting, Time: time.Date(2026, 8, 21, 10, 0, 0, 0, loc)}, ""},
		{"Requesting_2024.01.23 04:30:04", gpushare.Handshake{State: gpushare.HandshakeRequesting, Time: time.Date(2024, 1, 23, 4, 30, 4, 0, loc)}, "Requesting_2024-01-23 04:30:04"},
		{"Deleted_2024.01.23 04:30:04", gpushare.Handshake{State: gpushare.HandshakeDeleted, Time: time.Date(2024, 1, 23, 4, 30, 4, 0, loc)}, "Deleted_2024-01-23 04:30:04"},
		{"Reported 2024-01-23 04:30:04.434037031 +0000 UTC m=+1104711.777756895",
			gpushare.Handshake{State: gpushare.HandshakeReported, Time: time.Date(2024, 1, 23, 4, 30, 4, 434037031, time.UTC)},
			"Reported 2024-01-23 04:30:04.434037031 +0000 UTC"},
	} {
		h, err := gpushare.DecodeHandshake(tc.value, loc)
		require.NoError(t, err, tc.value)
		require.Equal(t, tc.want.State, h.State)
		require.True(t, tc.want.Time.Equal(h.Time), "%s: %v", tc.value, h.Time)
		again := tc.again
		if again == "" {
			again = tc.value
		}
		require.Equal(t, again, h.String())
	}
	for _, bad := range []string{"", "Requesting", "Requesting_yesterday", "Reported now", "Pending_2026-08-21 10:00:00"} {
		_, err := gpushare.DecodeHandshake(bad, nil)
		require.ErrorIs(t, err, gpushare.ErrMalformedAnnotation, bad)
	}
}

func TestCordonAndBindPhase(t *testing.T) {
	ids, err := gpushare.DecodeCordon(" GPU-a, ,GPU-b,")
	require.NoError(t, err)
	require.Equal(t, []string{"GPU-a", "GPU-b"}, ids)
	require.Equal(t, "GPU-a,GPU-b", gpushare.EncodeCordon(ids))
	_, err = gpushare.DecodeCordon("GPU-a b")
	require.ErrorIs(t, err, gpushare.ErrMalformedAnnotation)

	for _, p := range []gpushare.BindPhase{gpushare.BindAllocating, gpushare.BindSuccess, gpushare.BindFailed} {
		got, err := gpushare.ParseBindPhase(string(p))
		require.NoError(t, err)
		require.Equal(t, p, got)
	}
	_, err = gpushare.ParseBindPhase("Success")
	require.ErrorIs(t, err, gpushare.ErrMalformedAnnotation)
}
