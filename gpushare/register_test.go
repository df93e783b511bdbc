package gpushare_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/gpushare"
)

// The worked examples of HAMi's notes (research/hami.md §3.1), byte for byte.
const (
	v100Fields9 = "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true,0,hami-core:" +
		"GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,1,true,1,hami-core:"
	v100Fields7 = "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:" +
		"GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,1,true:"
	a100JSON = `[{"id":"GPU-aaaa","count":10,"devmem":81559,"devcore":100,"type":"NVIDIA A100-SXM4-80GB","mode":"hami-core","health":true},` +
		`{"id":"GPU-cccc","index":2,"count":7,"devmem":81920,"devcore":100,"type":"NVIDIA A100-SXM4-80GB","numa":1,"mode":"mig",` +
		`"migProfiles":[{"name":"1g.10gb","memoryMB":9984,"core":15,"sliceCount":1,"placements":[{"start":0,"size":1},{"start":1,"size":1}]}],"health":true}]`
	unhealthyV28 = `[{"id":"GPU-bbbb","index":1,"count":10,"devmem":81559,"devcore":100,"type":"NVIDIA A100-SXM4-80GB","numa":1,"mode":"hami-core","devicepairscore":{}}]`
)

var v100 = []gpushare.Device{
	{ID: "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448", Index: 0, Count: 10, MemoryMiB: 32768, Cores: 100,
		Type: "NVIDIA-Tesla V100-PCIE-32GB", NUMA: 0, Mode: gpushare.ModeHAMiCore, Health: true},
	{ID: "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec", Index: 1, Count: 10, MemoryMiB: 32768, Cores: 100,
		Type: "NVIDIA-Tesla V100-PCIE-32GB", NUMA: 1, Mode: gpushare.ModeHAMiCore, Health: true},
}

var a100 = []gpushare.Device{
	{ID: "GPU-aaaa", Count: 10, MemoryMiB: 81559, Cores: 100, Type: "NVIDIA A100-SXM4-80GB", Mode: gpushare.ModeHAMiCore, Health: true},
	{ID: "GPU-cccc", Index: 2, Count: 7, MemoryMiB: 81920, Cores: 100, Type: "NVIDIA A100-SXM4-80GB", NUMA: 1, Mode: gpushare.ModeMIG,
		MIGProfiles: []gpushare.MIGProfile{{Name: "1g.10gb", MemoryMiB: 9984, Cores: 15, SliceCount: 1,
			Placements: []gpushare.MIGPlacement{{Start: 0, Size: 1}, {Start: 1, Size: 1}}}},
		Health: true},
}

func TestNodeDevicesGolden(t *testing.T) {
	unhealthy := []gpushare.Device{{ID: "GPU-bbbb", Index: 1, Count: 10, MemoryMiB: 81559, Cores: 100,
		Type: "NVIDIA A100-SXM4-80GB", NUMA: 1, Mode: gpushare.ModeHAMiCore}}
	v7 := []gpushare.Device{v100[0], v100[1]}
	v7[1].Index = 0 // the 7-field form has no index: it reads as 0
	for _, tc := range []struct {
		name   string
		value  string
		format gpushare.RegistrationFormat
		want   []gpushare.Device
	}{
		{"v2.5-v2.7 nine fields", v100Fields9, gpushare.FormatFields9, v100},
		{"v2.4 seven fields", v100Fields7, gpushare.FormatFields7, v7},
		{"v2.10 JSON with MIG", a100JSON, gpushare.FormatJSON, a100},
		{"v2.8 JSON, unhealthy (no health key)", unhealthyV28, gpushare.FormatJSONV28, unhealthy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.format, gpushare.DetectRegistrationFormat(tc.value))
			got, err := gpushare.DecodeNodeDevices(tc.value)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			enc, err := gpushare.EncodeNodeDevices(got, tc.format)
			require.NoError(t, err)
			require.Equal(t, tc.value, enc, "encoder must write HAMi's bytes")
		})
	}
}

func TestNodeDevicesDefaults(t *testing.T) {
	// JSON: missing health is unhealthy, missing index/numa are 0, empty
	// mode is hami-core, pair scores and templates are ignored.
	got, err := gpushare.DecodeNodeDevices(`[{"id":"GPU-x","count":10,"devmem":1000,"devcore":100,"type":"NVIDIA T4","devicepairscore":{"uuid":"GPU-x","score":{"GPU-y":20}},"migtemplate":[[{"name":"a","core":1,"memory":2,"count":3}]],"custominfo":{"k":1}}]`)
	require.NoError(t, err)
	require.Equal(t, []gpushare.Device{{ID: "GPU-x", Count: 10, MemoryMiB: 1000, Cores: 100, Type: "NVIDIA T4", Mode: gpushare.ModeHAMiCore}}, got)

	// Strings: 9 fields with an empty mode, and lenient bools as strconv reads them.
	got, err = gpushare.DecodeNodeDevices("GPU-y,2,100,100,NVIDIA-T4,0,1,3,:")
	require.NoError(t, err)
	require.Equal(t, []gpushare.Device{{ID: "GPU-y", Index: 3, Count: 2, MemoryMiB: 100, Cores: 100, Type: "NVIDIA-T4", Mode: gpushare.ModeHAMiCore, Health: true}}, got)

	got, err = gpushare.DecodeNodeDevices("[]")
	require.NoError(t, err)
	require.Empty(t, got)
}

func TestNodeDevicesMalformed(t *testing.T) {
	for name, value := range map[string]string{
		"empty":             "",
		"no separator":      "GPU-x,10,100,100,NVIDIA,0,true",
		"eight fields":      "GPU-x,10,100,100,NVIDIA,0,true,0:",
		"bad count":         "GPU-x,ten,100,100,NVIDIA,0,true:",
		"count overflow":    "GPU-x,3000000000,100,100,NVIDIA,0,true:",
		"bad health":        "GPU-x,10,100,100,NVIDIA,0,yes:",
		"negative index":    "GPU-x,10,100,100,NVIDIA,0,true,-1,hami-core:",
		"negative memory":   "GPU-x,10,-100,100,NVIDIA,0,true:",
		"empty id":          ",10,100,100,NVIDIA,0,true:",
		"duplicate id":      "GPU-x,10,100,100,NVIDIA,0,true:GPU-x,10,100,100,NVIDIA,1,true:",
		"broken JSON":       `[{"id":"GPU-x"`,
		"JSON null element": `[null]`,
		"JSON wrong type":   `[{"id":"GPU-x","count":"10"}]`,
		"JSON trailing":     `[{"id":"GPU-x"}] x`,
		"JSON no id":        `[{"count":10}]`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := gpushare.DecodeNodeDevices(value)
			require.ErrorIs(t, err, gpushare.ErrMalformedAnnotation)
			var ae *gpushare.AnnotationError
			require.True(t, errors.As(err, &ae))
			require.Equal(t, gpushare.AnnotationRegister, ae.Key)
		})
	}
}

func TestEncodeNodeDevicesUnencodable(t *testing.T) {
	_, err := gpushare.EncodeNodeDevices([]gpushare.Device{{ID: "GPU-x", Type: "NVIDIA T4,PCIe"}}, gpushare.FormatFields9)
	require.ErrorIs(t, err, gpushare.ErrUnencodable)
	_, err = gpushare.EncodeNodeDevices(a100, gpushare.FormatFields7)
	require.ErrorIs(t, err, gpushare.ErrUnencodable)
	_, err = gpushare.EncodeNodeDevices(a100, gpushare.RegistrationFormat(42))
	require.ErrorIs(t, err, gpushare.ErrUnencodable)
}

func TestTypeName(t *testing.T) {
	require.Equal(t, "NVIDIA A100-SXM4-80GB", gpushare.TypeName("NVIDIA A100-SXM4-80GB"))
	require.Equal(t, "NVIDIA-Tesla V100-PCIE-32GB", gpushare.TypeName("Tesla V100-PCIE-32GB"))
	require.True(t, gpushare.Device{Type: "nvidia-t4"}.IsNVIDIA())
	require.False(t, gpushare.Device{Type: "AMD MI300"}.IsNVIDIA())
}
