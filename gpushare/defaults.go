package gpushare

// HAMi's chart defaults (2.9 and 2.10, the charts Cozystack ships), each
// defined here once: a zero field of HAMiSettings, Config or
// discovery.Config takes the matching default, and the GPUs that
// gpusharetest and hamisim register are registered with them.
const (
	// DefaultDeviceSplitCount is devicePlugin.deviceSplitCount: the tasks
	// that may share one GPU, its slots (Device.Count).
	DefaultDeviceSplitCount = 10
	// DefaultDeviceMemoryScaling is devicePlugin.deviceMemoryScaling: a GPU
	// registers its memory times this (above 1 oversubscribes memory).
	DefaultDeviceMemoryScaling = 1.0
	// DefaultDeviceCoreScaling is devicePlugin.deviceCoreScaling: a GPU
	// registers DefaultDeviceCores times this.
	DefaultDeviceCoreScaling = 1.0
	// DefaultDeviceCores is the compute a GPU registers before
	// deviceCoreScaling: a whole card, in percent (Device.Cores).
	DefaultDeviceCores = 100
	// defaultNodePolicy is
	// scheduler.defaultSchedulerPolicy.nodeSchedulerPolicy.
	defaultNodePolicy = NodeBinpack
	// defaultGPUPolicy is
	// scheduler.defaultSchedulerPolicy.gpuSchedulerPolicy.
	defaultGPUPolicy = GPUSpread
)

// Scheduler defaults only Config reads.
const (
	// defaultGPUNum is defaultGPUNum: the nvidia.com/gpu HAMi's webhook
	// adds to a container that asks for memory or cores only.
	defaultGPUNum = 1
	// defaultMemoryFactor is memoryFactor: gpumem is multiplied by it.
	defaultMemoryFactor = 1
)
