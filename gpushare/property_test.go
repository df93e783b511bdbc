package gpushare_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
)

// model is the test's own, independent bookkeeping: capacity and usage per
// GPU, summed from the placements the ledger accepted.
type model struct {
	capacity    map[string]gpushare.Amount
	schedulable map[string]bool
	used        map[string]gpushare.Amount
	held        map[string]gpushare.Placement
	keys        []string
}

func (m *model) add(p gpushare.Placement, sign int64) {
	for _, c := range p.Containers {
		for _, d := range c {
			u := m.used[d.UUID]
			u.Slots += sign
			u.MemoryMiB += sign * int64(d.MemoryMiB)
			u.Cores += sign * int64(d.Cores)
			m.used[d.UUID] = u
		}
	}
}

// admit is the test's own statement of the rules a committed allocation
// must keep, share by share and container by container: "" when the
// ledger must accept it, "room" when a GPU lacks slots, memory or cores,
// "rule" when it breaks a sharing rule (a GPU twice in a container, an
// unhealthy or cordoned GPU, 100 cores on a used card, 0 cores on a card
// whose cores are all allocated). The first share that fails decides.
func (m *model) admit(p gpushare.Placement) string {
	used := map[string]gpushare.Amount{}
	get := func(id string) gpushare.Amount {
		if u, ok := used[id]; ok {
			return u
		}
		return m.used[id]
	}
	for _, c := range p.Containers {
		seen := map[string]bool{}
		for _, d := range c {
			u, capa := get(d.UUID), m.capacity[d.UUID]
			mem, cores := int64(d.MemoryMiB), int64(d.Cores)
			switch {
			case seen[d.UUID], !m.schedulable[d.UUID]:
				return "rule"
			case u.Slots >= capa.Slots, capa.MemoryMiB-u.MemoryMiB < mem, capa.Cores-u.Cores < cores:
				return "room"
			case capa.Cores == 100 && cores == 100 && u.Slots > 0, u.Cores == capa.Cores && cores == 0:
				return "rule"
			}
			seen[d.UUID] = true
		}
		for _, d := range c {
			used[d.UUID] = get(d.UUID).Add(gpushare.Amount{Slots: 1, MemoryMiB: int64(d.MemoryMiB), Cores: int64(d.Cores)})
		}
	}
	return ""
}

func (m *model) fits(p gpushare.Placement) bool {
	after := map[string]gpushare.Amount{}
	for _, c := range p.Containers {
		for _, d := range c {
			a, ok := after[d.UUID]
			if !ok {
				a = m.used[d.UUID]
			}
			after[d.UUID] = a.Add(gpushare.Amount{Slots: 1, MemoryMiB: int64(d.MemoryMiB), Cores: int64(d.Cores)})
		}
	}
	for id, a := range after {
		c := m.capacity[id]
		if a.Slots > c.Slots || a.MemoryMiB > c.MemoryMiB || a.Cores > c.Cores {
			return false
		}
	}
	return true
}

// TestPropertyNeverOverAllocates runs a million random fit, place, allocate,
// release and cordon operations (100k under -short or -race) with a fixed
// seed and checks after each that no GPU holds more memory, cores or slots
// than it has, that Allocate accepts exactly what the rules allow, that placements only use schedulable GPUs and each GPU once per
// container, that the ledger agrees with the test's own sums, and, every
// 50k operations and at the end, that it equals a ledger rebuilt from
// scratch from Node and Pod objects.
func TestPropertyNeverOverAllocates(t *testing.T) {
	ops := 1_000_000
	if testing.Short() || raceEnabled {
		ops = 100_000
	}
	rng := rand.New(rand.NewPCG(42, 4242))
	var nodes []*corev1.Node
	m := &model{capacity: map[string]gpushare.Amount{}, schedulable: map[string]bool{},
		used: map[string]gpushare.Amount{}, held: map[string]gpushare.Placement{}}
	for i := range 12 {
		devs := gpusharetest.GPUs(fmt.Sprintf("%02d", i), 4, gpusharetest.Models()[i%3].Type, gpusharetest.Models()[i%3].MemoryMiB)
		for j := range devs {
			devs[j].Count = int32(2 + (i+j)%4) // small split counts hit the slot limit often
			devs[j].Health = (i*4+j)%11 != 0
			m.capacity[devs[j].ID] = gpushare.Amount{Slots: int64(devs[j].Count), MemoryMiB: int64(devs[j].MemoryMiB), Cores: int64(devs[j].Cores)}
			m.schedulable[devs[j].ID] = devs[j].Health
		}
		nodes = append(nodes, gpusharetest.NodeT(t, fmt.Sprintf("node-%02d", i), devs...))
	}
	l := newLedger(t, gpushare.Config{}, nodes)

	shape := func() gpushare.PodRequest {
		c := gpushare.ContainerRequest{Name: "main", Count: int32(1 + rng.IntN(7)/5), Cores: int32(rng.IntN(5) * 25)}
		switch rng.IntN(3) {
		case 0:
			c.MemoryMiB = int32(512 << rng.IntN(6))
		case 1:
			c.MemoryPercent = int32(10 * (1 + rng.IntN(10)))
		}
		r := gpushare.PodRequest{Namespace: "p", Containers: []gpushare.ContainerRequest{c}}
		if rng.IntN(4) == 0 {
			r.Containers = append([]gpushare.ContainerRequest{{Name: "init", Init: true, Count: 1, MemoryMiB: 1024}}, r.Containers...)
		}
		r.NodePolicy = []gpushare.NodePolicy{gpushare.NodeBinpack, gpushare.NodeSpread}[rng.IntN(2)]
		r.GPUPolicy = []gpushare.GPUPolicy{gpushare.GPUSpread, gpushare.GPUBinpack, "mutex,binpack", gpushare.GPUNUMA}[rng.IntN(4)]
		return r
	}
	accept := func(p gpushare.Placement) {
		key := p.Namespace + "/" + p.Name
		m.held[key] = p
		m.keys = append(m.keys, key)
		m.add(p, 1)
	}
	var placed, refused, conflicts, full int
	for op := range ops {
		switch k := rng.IntN(100); {
		case k < 50: // fit and place a random shape
			r := shape()
			r.Name = fmt.Sprintf("pod-%d", op)
			p, err := l.Place(r)
			if errors.Is(err, gpushare.ErrNoFit) {
				full++
				break
			}
			require.NoError(t, err)
			require.True(t, m.fits(p), "op %d: placement %v over capacity", op, p)
			for _, c := range p.Containers {
				seen := map[string]bool{}
				for _, d := range c {
					require.True(t, m.schedulable[d.UUID], "op %d: unschedulable %s", op, d.UUID)
					require.False(t, seen[d.UUID], "op %d: %s twice in a container", op, d.UUID)
					seen[d.UUID] = true
				}
			}
			accept(p)
			placed++
		case k < 85: // release a held pod
			if len(m.keys) == 0 {
				break
			}
			i := rng.IntN(len(m.keys))
			key := m.keys[i]
			m.keys[i] = m.keys[len(m.keys)-1]
			m.keys = m.keys[:len(m.keys)-1]
			p := m.held[key]
			delete(m.held, key)
			m.add(p, -1)
			l.Release(p.Namespace, p.Name)
		case k < 98: // allocate a hand-made placement; the ledger must refuse what breaks a rule
			n := rng.IntN(len(nodes))
			var p gpushare.Placement
			for range 1 + rng.IntN(2) {
				var c gpushare.ContainerAllocation
				for range 1 + rng.IntN(2) {
					id := fmt.Sprintf("GPU-%02d-%d", n, rng.IntN(4))
					c = append(c, share(id, int32(rng.IntN(int(m.capacity[id].MemoryMiB)/2)), []int32{0, 0, 10, 30, 55, 100}[rng.IntN(6)]))
				}
				p.Containers = append(p.Containers, c)
			}
			p.Namespace, p.Name, p.Node = "a", fmt.Sprintf("alloc-%d", op), nodes[n].Name
			err := l.Allocate(p)
			switch m.admit(p) {
			case "":
				require.NoError(t, err, "op %d", op)
				accept(p)
			case "room":
				require.ErrorIs(t, err, gpushare.ErrOverAllocation, "op %d", op)
				refused++
			default:
				require.ErrorIs(t, err, gpushare.ErrGPUConflict, "op %d", op)
				conflicts++
			}
		default: // cordon or uncordon a GPU
			n := rng.IntN(len(nodes))
			id := fmt.Sprintf("GPU-%02d-%d", n, rng.IntN(4))
			node := nodes[n].DeepCopy()
			if rng.IntN(2) == 0 {
				node.Annotations[gpushare.AnnotationCordon] = id
			}
			require.NoError(t, l.SetNode(node))
			for i := range 4 {
				gid := fmt.Sprintf("GPU-%02d-%d", n, i)
				m.schedulable[gid] = gid != node.Annotations[gpushare.AnnotationCordon] && (n*4+i)%11 != 0
			}
		}
		if op%1000 == 999 {
			requireModel(t, l, m, op)
		}
		if op%50_000 == 49_999 || op == ops-1 {
			requireRebuildEqual(t, l, m)
		}
	}
	t.Logf("%d ops: %d placed, %d no-fit, %d over-allocations and %d rule breaks refused, %d held at the end",
		ops, placed, full, refused, conflicts, len(m.held))
	require.Greater(t, placed, ops/10)
	require.Greater(t, full, ops/100)
	require.Greater(t, refused, ops/1000)
	require.Greater(t, conflicts, ops/1000)
}

func requireModel(t *testing.T, l *gpushare.Ledger, m *model, op int) {
	t.Helper()
	for _, n := range l.Nodes() {
		for _, g := range n.GPUs {
			require.Equal(t, m.used[g.ID], g.Used, "op %d: GPU %s", op, g.ID)
			require.False(t, g.Overcommitted, "op %d: GPU %s", op, g.ID)
		}
	}
}

func requireRebuildEqual(t *testing.T, l *gpushare.Ledger, m *model) {
	t.Helper()
	var nodes []corev1.Node
	for _, n := range l.Nodes() {
		devs := make([]gpushare.Device, len(n.GPUs))
		var cordoned []string
		for i, g := range n.GPUs {
			devs[i] = g.Device
			if g.Cordoned {
				cordoned = append(cordoned, g.ID)
			}
		}
		node := gpusharetest.NodeT(t, n.Name, devs...)
		node.Annotations[gpushare.AnnotationCordon] = gpushare.EncodeCordon(cordoned)
		nodes = append(nodes, *node)
	}
	var pods []corev1.Pod
	for _, p := range m.held {
		pods = append(pods, *gpusharetest.AllocatedPodT(t, p))
	}
	fresh, err := gpushare.NewLedger(gpushare.Config{})
	require.NoError(t, err)
	require.NoError(t, fresh.Load(nodes, pods))
	require.Equal(t, l.Nodes(), fresh.Nodes())
	require.Equal(t, l.Namespaces(), fresh.Namespaces())
	require.Equal(t, l.Summary(), fresh.Summary())
}
