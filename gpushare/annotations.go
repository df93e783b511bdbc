package gpushare

// Annotation keys HAMi reads and writes for NVIDIA GPUs (HAMi v2.4–v2.10).
const (
	// AnnotationRegister is the node annotation in which HAMi's device
	// plugin registers the node's GPUs (see DecodeNodeDevices).
	AnnotationRegister = "hami.io/node-nvidia-register"
	// AnnotationHandshake is the node handshake annotation (see
	// DecodeHandshake). NVIDIA's key has no vendor suffix.
	AnnotationHandshake = "hami.io/node-handshake"
	// AnnotationCordon lists GPU UUIDs excluded from new allocations
	// (HAMi v2.10, see DecodeCordon).
	AnnotationCordon = "hami.io/device-cordon"

	// AnnotationNode is the pod annotation (and label) naming the node the
	// scheduler chose.
	AnnotationNode = "hami.io/vgpu-node"
	// annotationTime is the pod annotation with the Unix time of the
	// scheduler's decision.
	annotationTime = "hami.io/vgpu-time"
	// AnnotationToAllocate is the allocation string the device plugin
	// consumes container by container (see DecodePodDevices).
	AnnotationToAllocate = "hami.io/vgpu-devices-to-allocate"
	// AnnotationAllocated is the allocation string kept for accounting; it
	// is never consumed (see DecodePodDevices).
	AnnotationAllocated = "hami.io/vgpu-devices-allocated"
	// AnnotationBindPhase is the pod's bind phase (see ParseBindPhase).
	AnnotationBindPhase = "hami.io/bind-phase"

	// AnnotationUseGPUType restricts a pod to GPUs whose type contains one
	// of the comma-separated entries (case-insensitive).
	AnnotationUseGPUType = "nvidia.com/use-gputype"
	// AnnotationNoUseGPUType excludes GPUs whose type contains one of the
	// entries.
	AnnotationNoUseGPUType = "nvidia.com/nouse-gputype"
	// AnnotationUseGPUUUID restricts a pod to the listed GPU UUIDs.
	AnnotationUseGPUUUID = "nvidia.com/use-gpuuuid"
	// AnnotationNoUseGPUUUID excludes the listed GPU UUIDs.
	AnnotationNoUseGPUUUID = "nvidia.com/nouse-gpuuuid"
	// AnnotationVGPUMode restricts a pod to GPUs of a mode ("hami-core" or
	// "mig").
	AnnotationVGPUMode = "nvidia.com/vgpu-mode"
	// AnnotationNUMABind ("true") keeps all GPUs of a container on one NUMA
	// node.
	AnnotationNUMABind = "nvidia.com/numa-bind"
	// AnnotationNodePolicy overrides the node scheduling policy for a pod.
	AnnotationNodePolicy = "hami.io/node-scheduler-policy"
	// AnnotationGPUPolicy overrides the GPU scheduling policy for a pod.
	AnnotationGPUPolicy = "hami.io/gpu-scheduler-policy"
	// AnnotationScoringWeights sets the device scoring weights for a pod,
	// "slot=a,core=b,memory=c" (HAMi v2.10).
	AnnotationScoringWeights = "hami.io/device-scoring-weights"
)

// Resource names HAMi registers for NVIDIA GPUs by default.
const (
	// ResourceGPU is the number of physical GPUs a container uses; on a
	// node it counts GPUs × deviceSplitCount slots.
	ResourceGPU = "nvidia.com/gpu"
	// ResourceMemory is device memory per GPU in MiB.
	ResourceMemory = "nvidia.com/gpumem"
	// ResourceMemoryPercentage is device memory per GPU as a percentage of
	// the card's registered memory.
	ResourceMemoryPercentage = "nvidia.com/gpumem-percentage"
	// ResourceCores is the share of a GPU's compute in percent; 100 asks
	// for the whole card.
	ResourceCores = "nvidia.com/gpucores"
	// ResourcePriority is the runtime priority (0 high, 1 low).
	ResourcePriority = "nvidia.com/priority"
)

// VendorNVIDIA is the type word HAMi writes in allocation strings.
const VendorNVIDIA = "NVIDIA"

// Device modes.
const (
	// ModeHAMiCore is a GPU shared through HAMi-core (the default).
	ModeHAMiCore = "hami-core"
	// ModeMIG is a GPU split by dynamic MIG.
	ModeMIG = "mig"
)
