package hamisim

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/internal/hamnode"
)

// GPU returns a healthy hami-core GPU as HAMi's device plugin registers it
// with the chart's defaults: gpushare.DefaultDeviceSplitCount slots,
// gpushare.DefaultDeviceCores cores.
func GPU(id string, index uint, model string, memoryMiB int32) gpushare.Device {
	return hamnode.GPU(id, index, model, memoryMiB)
}

// GPUs returns n GPUs of one model (see GPU) with UUIDs GPU-<prefix>-<i>.
func GPUs(prefix string, n int, model string, memoryMiB int32) []gpushare.Device {
	return hamnode.GPUs(prefix, n, model, memoryMiB)
}

// Node returns node name as HAMi's device plugin leaves it: labelled
// gpu=on, devs in the hami.io/node-nvidia-register annotation written in
// format, and GPUs × slots of nvidia.com/gpu in its capacity and
// allocatable (gpusharetest.NodeIn returns the same). Errors wrap
// gpushare.ErrUnencodable.
func Node(format gpushare.RegistrationFormat, name string, devs ...gpushare.Device) (*corev1.Node, error) {
	return hamnode.Node(format, name, devs...)
}
