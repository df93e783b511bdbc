package backup

import (
	"hash/maphash"
	"slices"
)

// itemSet holds the items of a resource list as 64-bit keyed hashes of
// "<gvk>\x00<item>", sorted, with a bit per item for each kind of copy
// found in the archive: 8 bytes and 2 bits an item, about 1 MiB for the
// ~106k items of a 1 GiB archive. The seed is random per Verify, so
// nobody can craft two items that collide; two distinct items collide
// with probability below n²/2⁶⁵ (3·10⁻¹⁰ for 106k items).
type itemSet struct {
	seed   maphash.Seed
	hashes []uint64 // sorted, each once
	dups   []uint64 // hashes listed more than once
	// copies has a bit per listed item for each kind of copy found in the
	// archive (copyUnversioned, copyPreferred, copyOther).
	copies [3]bitset
	// listed says that a resource list was read (else every archive item
	// is "extra", which only serves to find duplicates).
	listed bool
	// extra holds archive items not in the list (all of them when there is
	// no list), to find their duplicates.
	extra [3]map[uint64]struct{}
}

// The copies of an item in the archive.
const (
	copyUnversioned = iota // resources/<r>/{namespaces/<ns>|cluster}/<name>.json
	copyPreferred          // resources/<r>/<version>-preferredversion/...
	copyOther              // resources/<r>/<version>/... (EnableAPIGroupVersions)
)

func newItemSet() *itemSet {
	s := &itemSet{seed: maphash.MakeSeed()}
	for i := range s.extra {
		s.extra[i] = map[uint64]struct{}{}
	}
	return s
}

// hash returns the key of an item given as its resource list key and
// entry ("v1/ConfigMap", "demo/web").
func (s *itemSet) hash(gvk, item string) uint64 {
	var h maphash.Hash
	h.SetSeed(s.seed)
	h.WriteString(gvk)
	h.WriteByte(0)
	h.WriteString(item)
	return h.Sum64()
}

// hashID returns the key of an item as its JSON names it: the same as
// hash(apiVersion+"/"+kind, namespace+"/"+name or name).
func (s *itemSet) hashID(id *itemID) uint64 {
	var h maphash.Hash
	h.SetSeed(s.seed)
	h.Write(id.apiVersion)
	h.WriteByte('/')
	h.Write(id.kind)
	h.WriteByte(0)
	if len(id.namespace) > 0 {
		h.Write(id.namespace)
		h.WriteByte('/')
	}
	h.Write(id.name)
	return h.Sum64()
}

// addListed records a listed item (before seal).
func (s *itemSet) addListed(h uint64) { s.hashes = append(s.hashes, h) }

// seal sorts the listed hashes and sets duplicates aside.
func (s *itemSet) seal() {
	slices.Sort(s.hashes)
	out := s.hashes[:0]
	for i, h := range s.hashes {
		if i > 0 && h == s.hashes[i-1] {
			if len(s.dups) == 0 || s.dups[len(s.dups)-1] != h {
				s.dups = append(s.dups, h)
			}
			continue
		}
		out = append(out, h)
	}
	s.hashes = slices.Clip(out)
	for i := range s.copies {
		s.copies[i] = newBitset(len(s.hashes))
	}
}

// index returns the position of h in the list, or -1.
func (s *itemSet) index(h uint64) int {
	i, ok := slices.BinarySearch(s.hashes, h)
	if !ok {
		return -1
	}
	return i
}

// found records an archive copy (copyUnversioned...) of the item with
// hash h. It returns whether the item is listed and whether this copy is
// a duplicate.
func (s *itemSet) found(h uint64, copyKind int) (listed, dup bool) {
	i := s.index(h)
	if i < 0 {
		m := s.extra[copyKind]
		_, dup = m[h]
		m[h] = struct{}{}
		return false, dup
	}
	return true, s.copies[copyKind].testAndSet(i)
}

type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) testAndSet(i int) bool {
	w, m := i/64, uint64(1)<<(i%64)
	was := b[w]&m != 0
	b[w] |= m
	return was
}

func (b bitset) has(i int) bool { return b[i/64]&(uint64(1)<<(i%64)) != 0 }
