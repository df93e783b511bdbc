package gpushare_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

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
	require.InDelta(t, 13.62, gpushare.DeviceScore(card, used, req, gpushare.DefaultWeights), 0.005)
	require.InDelta(t, 4.95, gpushare.DeviceScore(card, gpushare.Amount{}, req, gpushare.DefaultWeights), 0.005)
	require.InDelta(t, 4.33, gpushare.NodeScore(card.Add(card), used), 0.005)
	require.Zero(t, gpushare.NodeScore(card.Add(card), gpushare.Amount{}))
	require.Zero(t, gpushare.DeviceScore(gpushare.Amount{Slots: 10}, used, req, gpushare.DefaultWeights))
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

func TestAddonValues(t *testing.T) {
	_, err := gpushare.Addons{HAMi: true}.Values()
	require.ErrorIs(t, err, gpushare.ErrHAMiRequiresGPUOperator)
	require.EqualError(t, err, "addons.hami requires addons.gpuOperator to be enabled")

	y, err := gpushare.Addons{GPUOperator: true, HAMi: true}.YAML()
	require.NoError(t, err)
	golden(t, "addons-hami-defaults", y)

	y, err = gpushare.Addons{GPUOperator: true, HAMi: true, HAMiSettings: gpushare.HAMiSettings{
		SplitCount: 4, MemoryScaling: 1.5, NodePolicy: gpushare.NodeSpread, GPUPolicy: gpushare.GPUBinpack}}.YAML()
	require.NoError(t, err)
	golden(t, "addons-hami-tuned", y)

	y, err = gpushare.Addons{GPUOperator: true}.YAML()
	require.NoError(t, err)
	golden(t, "addons-gpu-operator-only", y)

	_, err = gpushare.Addons{GPUOperator: true, HAMi: true, HAMiSettings: gpushare.HAMiSettings{GPUPolicy: "pack"}}.Values()
	require.ErrorIs(t, err, gpushare.ErrInvalidConfig)
	cfg, err := gpushare.HAMiSettings{NodePolicy: gpushare.NodeSpread}.Config()
	require.NoError(t, err)
	require.Equal(t, gpushare.NodeSpread, cfg.NodePolicy)
	require.Equal(t, gpushare.GPUSpread, cfg.GPUPolicy)
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
