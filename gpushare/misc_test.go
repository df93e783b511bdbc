package gpushare_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
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

func TestScoresWorkedExample(t *testing.T) {
	// research/hami.md §5.3 and §5.4.
	card := gpushare.Amount{Slots: 10, MemoryMiB: 81920, Cores: 100}
	used := gpushare.Amount{Slots: 2, MemoryMiB: 30000, Cores: 30}
	req := gpushare.Amount{Slots: 1, MemoryMiB: 16000, Cores: 20}
	require.InDelta(t, 13.62, gpushare.DeviceScore(card, used, req, gpushare.DefaultWeights()), 0.005)
	require.InDelta(t, 4.95, gpushare.DeviceScore(card, gpushare.Amount{}, req, gpushare.DefaultWeights()), 0.005)
	require.InDelta(t, 4.33, gpushare.NodeScore(card.Add(card), used), 0.005)
	require.Zero(t, gpushare.NodeScore(card.Add(card), gpushare.Amount{}))
	require.Zero(t, gpushare.DeviceScore(gpushare.Amount{Slots: 10}, used, req, gpushare.DefaultWeights()))
	// Weights: memory only.
	require.InDelta(t, 10*30000.0/81920, gpushare.DeviceScore(card, used, gpushare.Amount{}, gpushare.Weights{Memory: 1}), 0.001)
}

func TestWhatIf(t *testing.T) {
	l := newLedger(t, gpushare.Config{}, []*corev1.Node{gpusharetest.NodeT(t, "n", gpusharetest.GPUs("n", 2, t4Type, 15360)...)},
		held("x", "n", gpushare.ContainerAllocation{share("GPU-n-0", 5000, 0)}))
	shape := ask("shape", gpushare.ContainerRequest{Count: 1, MemoryMiB: 4000})
	// GPU0 has 10360 MiB free: two pods, 2360 left. GPU1 has 15360: three, 3360 left.
	w, err := l.WhatIf(shape, 0)
	require.NoError(t, err)
	require.Equal(t, 5, w.Fits)
	require.False(t, w.Limited)
	require.Equal(t, map[string]int{"n": 5}, w.ByNode)
	require.Equal(t, int64(25720), w.FreeMiB)
	require.Equal(t, int64(5720), w.StrandedMiB)
	require.InDelta(t, 5720.0/25720, w.Fragmentation, 1e-9)
	require.NotNil(t, w.Next)
	require.Equal(t, "new/shape", w.Next.Pod)
	require.Equal(t, gpushare.ReasonCardInsufficientMemory, w.Next.Nodes[0].GPUs[0].Reason)

	w, err = l.WhatIf(shape, 2)
	require.NoError(t, err)
	require.Equal(t, 2, w.Fits)
	require.True(t, w.Limited)
	require.Nil(t, w.Next)

	nu, _ := l.Node("n")
	require.Equal(t, int64(5000), nu.Used.MemoryMiB, "what-if leaves the ledger alone")
	_, err = l.WhatIf(ask("bad", gpushare.ContainerRequest{Count: 1, Cores: 101}), 1)
	require.ErrorIs(t, err, gpushare.ErrInvalidRequest)
}

// HAMi's values round-trip: what Values writes, ParseHAMiValues reads back
// as the same settings, and Config follows them.
func TestHAMiSettings(t *testing.T) {
	tuned := gpushare.HAMiSettings{SplitCount: 4, MemoryScaling: 1.5, CoreScaling: 1, NodePolicy: gpushare.NodeSpread,
		GPUPolicy: gpushare.GPUBinpack, Resources: gpushare.ResourceNames{GPU: "example.com/gpu"}, SkipWebhook: true}
	values, err := tuned.Values()
	require.NoError(t, err)
	y, err := yaml.Marshal(values)
	require.NoError(t, err)
	golden(t, "hami-values-tuned", y)
	var decoded map[string]any
	require.NoError(t, yaml.Unmarshal(y, &decoded), "as the API returns it")
	back, err := gpushare.ParseHAMiValues(decoded)
	require.NoError(t, err)
	require.Equal(t, tuned, back)

	defaults, err := gpushare.HAMiSettings{}.Values()
	require.NoError(t, err)
	y, err = yaml.Marshal(defaults)
	require.NoError(t, err)
	golden(t, "hami-values-defaults", y)

	cfg, err := tuned.Config()
	require.NoError(t, err)
	require.Equal(t, gpushare.Config{NodePolicy: gpushare.NodeSpread, GPUPolicy: gpushare.GPUBinpack,
		Resources: gpushare.ResourceNames{GPU: "example.com/gpu"}, SkipWebhook: true}, cfg)
	cfg, err = gpushare.HAMiSettings{NodePolicy: gpushare.NodeSpread}.Config()
	require.NoError(t, err)
	require.Equal(t, gpushare.GPUSpread, cfg.GPUPolicy)

	_, err = gpushare.HAMiSettings{GPUPolicy: "pack"}.Values()
	require.ErrorIs(t, err, gpushare.ErrInvalidConfig)
}

func TestParseHAMiValues(t *testing.T) {
	for _, tt := range []struct {
		name    string
		values  map[string]any
		want    gpushare.HAMiSettings
		wantErr error
	}{
		{"nothing set: the chart defaults", nil, gpushare.HAMiSettings{}, nil},
		{"policies", map[string]any{"hami": map[string]any{"scheduler": map[string]any{"defaultSchedulerPolicy": map[string]any{
			"nodeSchedulerPolicy": "spread", "gpuSchedulerPolicy": "mutex,binpack"}}}},
			gpushare.HAMiSettings{NodePolicy: gpushare.NodeSpread, GPUPolicy: "mutex,binpack"}, nil},
		{"resource names and no webhook", map[string]any{"hami": map[string]any{"resourceName": "example.com/gpu", "resourceMem": "example.com/gpumem",
			"resourceMemPercentage": "example.com/gpumem-percentage", "resourceCores": "example.com/gpucores",
			"scheduler": map[string]any{"admissionWebhook": map[string]any{"enabled": false}}}},
			gpushare.HAMiSettings{Resources: gpushare.ResourceNames{GPU: "example.com/gpu", Memory: "example.com/gpumem",
				MemoryPercentage: "example.com/gpumem-percentage", Cores: "example.com/gpucores"}, SkipWebhook: true}, nil},
		{"split count as an int", map[string]any{"hami": map[string]any{"devicePlugin": map[string]any{"deviceSplitCount": int64(4)}}},
			gpushare.HAMiSettings{SplitCount: 4}, nil},
		{"unknown policy", map[string]any{"hami": map[string]any{"scheduler": map[string]any{"defaultSchedulerPolicy": map[string]any{"nodeSchedulerPolicy": "random"}}}},
			gpushare.HAMiSettings{}, gpushare.ErrInvalidConfig},
		{"wrong type", map[string]any{"hami": map[string]any{"resourceName": int64(1)}}, gpushare.HAMiSettings{}, gpushare.ErrInvalidConfig},
		{"webhook switch of the wrong type", map[string]any{"hami": map[string]any{"scheduler": map[string]any{"admissionWebhook": map[string]any{"enabled": "no"}}}},
			gpushare.HAMiSettings{}, gpushare.ErrInvalidConfig},
		{"split count not a number", map[string]any{"hami": map[string]any{"devicePlugin": map[string]any{"deviceSplitCount": "4"}}},
			gpushare.HAMiSettings{}, gpushare.ErrInvalidConfig},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := gpushare.ParseHAMiValues(tt.values)
			require.ErrorIs(t, err, tt.wantErr)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestIsolation(t *testing.T) {
	for image, want := range map[string]gpushare.Isolation{
		"ubuntu:20.04":                            gpushare.IsolationFull,
		"nvidia/cuda:12.4.1-runtime-ubuntu22.04":  gpushare.IsolationMemoryOnly,
		"ubuntu:jammy":                            gpushare.IsolationMemoryOnly,
		"docker.io/library/ubuntu:24.04":          gpushare.IsolationNone,
		"python:3.12-alpine":                      gpushare.IsolationIncompatible,
		"nvcr.io/nvidia/pytorch:24.01-py3-ubuntu": 0, // unknown
	} {
		got, err := gpushare.ImageIsolation(image)
		if image == "nvcr.io/nvidia/pytorch:24.01-py3-ubuntu" {
			require.ErrorIs(t, err, gpushare.ErrUnknownImage)
			continue
		}
		require.NoError(t, err, image)
		require.Equal(t, want, got, image)
	}
	for v, want := range map[string]gpushare.Isolation{
		"2.27": gpushare.IsolationFull, "2.31": gpushare.IsolationFull, "2.32": gpushare.IsolationMemoryOnly,
		"2.35": gpushare.IsolationMemoryOnly, "2.36": gpushare.IsolationNone, "2.39": gpushare.IsolationNone,
	} {
		got, err := gpushare.GlibcIsolation(v)
		require.NoError(t, err)
		require.Equal(t, want, got, v)
	}
	_, err := gpushare.GlibcIsolation("two")
	require.ErrorIs(t, err, gpushare.ErrInvalidConfig)
	require.Equal(t, "memory only (compute limits fail silently)", gpushare.IsolationMemoryOnly.String())
}
