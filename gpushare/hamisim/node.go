package hamisim

import (
	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/internal/hamnode"
)

// GPUs returns n healthy hami-core GPUs of one model, as HAMi's device
// plugin registers them with the chart's defaults
// (gpushare.DefaultDeviceSplitCount slots, gpushare.DefaultDeviceCores
// cores), with UUIDs GPU-<prefix>-<i>.
func GPUs(prefix string, n int, model string, memoryMiB int32) []gpushare.Device {
	return hamnode.GPUs(prefix, n, model, memoryMiB)
}
