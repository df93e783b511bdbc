package gpushare

// The pod's own usage that HAMi's NVIDIA fitQuota
// (pkg/device/nvidia/device.go@v2.10.0) passes to FitQuota for each GPU it
// considers: the containers already fitted in the same phase (the
// "allocated" PodDevices), the GPUs already chosen for this container
// (tmpDevs) and the candidate, collapsed by CollapseInitContainerUsage.
//
// The phases follow scoreNode (pkg/scheduler/score.go@v2.10.0). An init
// container is fitted against the init containers before it only
// (allocateInitContainers: every entry is an init entry, so per GPU the
// largest counts). An app container is fitted against the app containers
// before it only (allocateAppContainers; the init entries are prepended
// afterwards), and there an entry's position is its index among app
// containers — so the first len(initContainers) app entries are taken as
// init entries by the collapse. HAMi writes an empty entry for a GPU-less
// app container only when the node registers a device typed exactly
// "NVIDIA" (Placement.EmptyEntries); otherwise such containers take no
// position. Without CollapseInitContainers (HAMi v2.9) every entry so far
// is summed.

// qEntry is one GPU share in HAMi's hypothetical PodDevices.
type qEntry struct {
	id         string
	pos        int
	mem, cores int64
}

// podQuota follows one pod's hypothetical usage while it is fitted.
type podQuota struct {
	collapse, empty bool
	numInit         int
	// init and app are the shares of the containers fitted so far.
	init, app []qEntry
	// cur is the container being fitted: its shares so far, position and
	// phase.
	cur     []qEntry
	curPos  int
	curInit bool
	buf     []qEntry
}

func (q *podQuota) reset(collapse, empty bool, numInit int) {
	q.collapse, q.empty, q.numInit = collapse, empty, numInit
	q.init, q.app, q.cur = q.init[:0], q.app[:0], q.cur[:0]
}

// begin starts container ci of ctrs (init containers first).
func (q *podQuota) begin(ctrs []ContainerRequest, ci int) {
	init, pos := q.collapse && ctrs[ci].Init, 0
	if q.collapse && !init {
		for j := range ci {
			if !ctrs[j].Init && (q.empty || ctrs[j].Count > 0) {
				pos++
			}
		}
	}
	q.beginAt(init, pos)
}

// beginAt starts a container of the init phase (with collapsing) or of
// the app phase at position pos.
func (q *podQuota) beginAt(init bool, pos int) {
	q.cur, q.curInit, q.curPos = q.cur[:0], init, pos
	if init || !q.collapse {
		q.curPos = 0
	}
}

// add records a share chosen for the current container.
func (q *podQuota) add(id string, mem, cores int64) {
	q.cur = append(q.cur, qEntry{id: id, pos: q.curPos, mem: mem, cores: cores})
}

// end files the current container's shares under its phase.
func (q *podQuota) end() {
	if q.curInit {
		q.init = append(q.init, q.cur...)
	} else {
		q.app = append(q.app, q.cur...)
	}
	q.cur = q.cur[:0]
}

// with returns the pod's usage with one more share on GPU id for the
// current container: what fitQuota passes to FitQuota.
func (q *podQuota) with(id string, mem, cores int64) (int64, int64) {
	prior := q.app
	if q.curInit {
		prior = q.init
	}
	q.buf = append(append(append(q.buf[:0], prior...), q.cur...), qEntry{id: id, pos: q.curPos, mem: mem, cores: cores})
	numInit := 0
	if q.collapse {
		numInit = q.numInit
	}
	return collapsedUsage(q.buf, numInit)
}

// collapsedUsage is CollapseInitContainerUsage summed
// (pkg/device/initContainer.go@v2.10.0): per GPU, the larger of the
// largest entry at a position below numInit and the sum of the others,
// for memory and cores apart; then the sum over GPUs.
func collapsedUsage(es []qEntry, numInit int) (mem, cores int64) {
	for i := range es {
		first := true
		for j := range i {
			if es[j].id == es[i].id {
				first = false
				break
			}
		}
		if !first {
			continue
		}
		var im, ic, am, ac int64
		for j := i; j < len(es); j++ {
			e := &es[j]
			switch {
			case e.id != es[i].id:
			case e.pos < numInit:
				im, ic = max(im, e.mem), max(ic, e.cores)
			default:
				am, ac = am+e.mem, ac+e.cores
			}
		}
		mem, cores = mem+max(im, am), cores+max(ic, ac)
	}
	return mem, cores
}

// numInit counts the request's init containers.
func numInit(ctrs []ContainerRequest) int {
	n := 0
	for i := range ctrs {
		if ctrs[i].Init {
			n++
		}
	}
	return n
}

// emptyEntries reports whether HAMi writes empty entries on n: a device
// typed exactly "NVIDIA" is registered (see Placement.EmptyEntries).
func emptyEntries(n *nodeState) bool {
	for i := range n.gpus {
		if n.gpus[i].dev.Type == VendorNVIDIA {
			return true
		}
	}
	return false
}
