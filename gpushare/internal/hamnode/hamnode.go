// Package hamnode renders what HAMi's device plugin registers: a default
// GPU and a node's registration. It is the one place behind
// gpusharetest's and hamisim's nodes (which differ in their imports:
// gpusharetest takes no client-go).
package hamnode

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/tenantkit/gpushare"
)

// GPU returns a healthy hami-core GPU as HAMi's device plugin registers it
// with the chart's defaults: gpushare.DefaultDeviceSplitCount slots,
// gpushare.DefaultDeviceCores cores.
func GPU(id string, index uint, model string, memoryMiB int32) gpushare.Device {
	return gpushare.Device{ID: id, Index: index, Count: gpushare.DefaultDeviceSplitCount, MemoryMiB: memoryMiB,
		Cores: gpushare.DefaultDeviceCores, Type: model, Mode: gpushare.ModeHAMiCore, Health: true}
}

// GPUs returns n GPUs of one model (see GPU) with UUIDs GPU-<prefix>-<i>.
func GPUs(prefix string, n int, model string, memoryMiB int32) []gpushare.Device {
	out := make([]gpushare.Device, n)
	for i := range out {
		out[i] = GPU(fmt.Sprintf("GPU-%s-%d", prefix, i), uint(i), model, memoryMiB)
	}
	return out
}

// Node returns node name as HAMi's device plugin leaves it: labelled
// gpu=on, devs in the hami.io/node-nvidia-register annotation written in
// format, and GPUs × slots of nvidia.com/gpu in its capacity and
// allocatable. It is the one place that renders a HAMi-registered Node
// (behind gpusharetest.NodeIn and hamisim.RegisterNode). Errors wrap
// gpushare.ErrUnencodable.
func Node(format gpushare.RegistrationFormat, name string, devs ...gpushare.Device) (*corev1.Node, error) {
	reg, err := gpushare.EncodeNodeDevices(devs, format)
	if err != nil {
		return nil, fmt.Errorf("registration of %s: %w", name, err)
	}
	var slots int64
	for _, d := range devs {
		slots += int64(d.Count)
	}
	q := *resource.NewQuantity(slots, resource.DecimalSI)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"gpu": "on"},
			Annotations: map[string]string{gpushare.AnnotationRegister: reg}},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{gpushare.ResourceGPU: q},
			Allocatable: corev1.ResourceList{gpushare.ResourceGPU: q},
		},
	}, nil
}
