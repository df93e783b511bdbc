package gpushare

import (
	"slices"
	"sort"
	"strings"
)

// nodeIndex keeps the schedulable nodes sorted by (node score, name), with
// what a quick check needs inline, so that Fit visits nodes in policy order
// and skips most that cannot fit without touching their GPUs.
type nodeIndex []indexEntry

type indexEntry struct {
	score float32
	// eligible is the number of GPUs that are healthy, not cordoned, in
	// hami-core mode and have a free slot.
	eligible int32
	// maxFreeMem and maxFreeCores are the largest free memory and cores
	// among eligible GPUs.
	maxFreeMem, maxFreeCores int64
	n                        *nodeState
}

func less(aScore float32, aName string, bScore float32, bName string) bool {
	if aScore != bScore {
		return aScore < bScore
	}
	return aName < bName
}

// find returns the position of n (by its indexed score) or -1.
func (x nodeIndex) find(n *nodeState) int {
	i := sort.Search(len(x), func(i int) bool { return !less(x[i].score, x[i].n.name, n.score, n.name) })
	if i < len(x) && x[i].n == n {
		return i
	}
	return -1
}

// entryFor computes n's score and quick-check summary.
func entryFor(n *nodeState) indexEntry {
	e := indexEntry{n: n}
	var capacity, used Amount
	for i := range n.gpus {
		g := &n.gpus[i]
		capacity, used = capacity.Add(g.capacity()), used.Add(g.used)
		if !g.schedulable() || g.used.Slots >= int64(g.dev.Count) {
			continue
		}
		e.eligible++
		e.maxFreeMem = max(e.maxFreeMem, int64(g.dev.MemoryMiB)-g.used.MemoryMiB)
		e.maxFreeCores = max(e.maxFreeCores, int64(g.dev.Cores)-g.used.Cores)
	}
	e.score = NodeScore(capacity, used)
	return e
}

// reindexLocked moves n to its place after its usage or GPUs changed,
// shifting only the entries between its old and new place. In bulk mode it
// does nothing; reindexAllLocked sorts at the end.
func (l *Ledger) reindexLocked(n *nodeState) {
	if l.bulk {
		return
	}
	old := -1
	if n.indexed {
		old = l.index.find(n)
	}
	if !n.registered || len(n.gpus) == 0 {
		if old >= 0 {
			l.index = slices.Delete(l.index, old, old+1)
		}
		n.indexed = false
		return
	}
	e := entryFor(n)
	x := l.index
	j := sort.Search(len(x), func(i int) bool { return !less(x[i].score, x[i].n.name, e.score, n.name) })
	n.score, n.indexed = e.score, true
	switch {
	case old < 0:
		l.index = slices.Insert(x, j, e)
	case j > old:
		copy(x[old:j-1], x[old+1:j])
		x[j-1] = e
	default:
		copy(x[j+1:old+1], x[j:old])
		x[j] = e
	}
}

// reindexAllLocked rebuilds the index from scratch.
func (l *Ledger) reindexAllLocked() {
	l.index = l.index[:0]
	for _, n := range l.nodes {
		n.indexed = false
		if !n.registered || len(n.gpus) == 0 {
			continue
		}
		e := entryFor(n)
		n.score, n.indexed = e.score, true
		l.index = append(l.index, e)
	}
	slices.SortFunc(l.index, func(a, b indexEntry) int {
		if a.score != b.score {
			if a.score < b.score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.n.name, b.n.name)
	})
}

// visit calls f on indexed entries in the order policy prefers them:
// binpack from the highest score, spread from the lowest, names ascending
// among equal scores. It stops when f returns false.
func (x nodeIndex) visit(policy NodePolicy, f func(e *indexEntry) bool) {
	if policy != NodeBinpack {
		for i := range x {
			if !f(&x[i]) {
				return
			}
		}
		return
	}
	for hi := len(x) - 1; hi >= 0; {
		lo := hi
		for lo > 0 && x[lo-1].score == x[hi].score {
			lo--
		}
		for i := lo; i <= hi; i++ {
			if !f(&x[i]) {
				return
			}
		}
		hi = lo - 1
	}
}
