package etcdrelocate

import (
	"context"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// fakeEtcd is a MembershipClient over an in-memory cluster, for the
// executor's decision logic: it applies membership changes the way etcd's
// server does and can fail a call before it applies (an error etcd
// returned), or after (a reply lost on the way back: the change happened).
type fakeEtcd struct {
	mu sync.Mutex
	// members are the members; status is each one's Status by ID (nil:
	// it does not answer).
	members []*pb.Member
	status  map[uint64]*clientv3.StatusResponse
	leader  uint64
	nextID  uint64
	// before are errors returned (in order) by an operation before it
	// applies; lose counts replies lost after it applied.
	before map[string][]error
	lose   map[string]int
	// notReady is how many promotes answer "learner not ready" first.
	notReady int
	// hashErr makes HashKV of a member fail; hash overrides its hash.
	hashErr map[uint64]error
	hash    map[uint64]uint32
	// advance is added to a member's applied index at every Status: a
	// learner catching up.
	advance map[uint64]uint64
	// calls counts the calls per operation; moves records MoveLeader's
	// transferees.
	calls map[string]int
	moves []uint64
	// endpoint is set on a single-member view (MoveLeader's client).
	endpoint string
	parent   *fakeEtcd
	// etcdIDs makes MemberAddAsLearner derive IDs as etcd does (from the
	// peer URLs and the second, computeMemberID) and refuse an ID removed
	// before with "member not found" (ErrIDRemoved through gRPC).
	etcdIDs bool
	removed map[uint64]bool
}

// newFakeEtcd returns a healthy cluster of n voters named m0…, member i
// with ID 0x100+i, leader m0, every member applied up to index 500.
func newFakeEtcd(n int) *fakeEtcd {
	f := &fakeEtcd{status: map[uint64]*clientv3.StatusResponse{}, nextID: 0x900, before: map[string][]error{},
		lose: map[string]int{}, hashErr: map[uint64]error{}, hash: map[uint64]uint32{}, advance: map[uint64]uint64{},
		calls: map[string]int{}}
	for i := range n {
		id := uint64(0x100 + i)
		f.members = append(f.members, &pb.Member{ID: id, Name: fmt.Sprintf("m%d", i),
			PeerURLs: []string{fakePeerURL(i)}, ClientURLs: []string{fakeClientURL(i)}})
		f.status[id] = f.newStatus(id, 500)
	}
	f.leader = 0x100
	return f
}

func fakePeerURL(i int) string   { return fmt.Sprintf("https://m%d.etcd-headless.ns.svc:2380", i) }
func fakeClientURL(i int) string { return fmt.Sprintf("https://m%d.etcd-headless.ns.svc:2379", i) }

func (f *fakeEtcd) newStatus(id, applied uint64) *clientv3.StatusResponse {
	return &clientv3.StatusResponse{Header: &pb.ResponseHeader{ClusterId: 0xc1, MemberId: id, Revision: 900},
		Version: "3.6.11", RaftIndex: 500, RaftAppliedIndex: applied}
}

func (f *fakeEtcd) root() *fakeEtcd {
	if f.parent != nil {
		return f.parent
	}
	return f
}

// enter counts the call and returns the scripted error for it, if any.
func (f *fakeEtcd) enter(op string) error {
	f.calls[op]++
	if errs := f.before[op]; len(errs) > 0 {
		f.before[op] = errs[1:]
		return errs[0]
	}
	return nil
}

// leave returns a lost reply if one is scripted for op.
func (f *fakeEtcd) leave(op string) error {
	if f.lose[op] > 0 {
		f.lose[op]--
		return fmt.Errorf("reply lost: %w", context.DeadlineExceeded)
	}
	return nil
}

func (f *fakeEtcd) byID(id uint64) *pb.Member { return byID(f.members, id) }

func (f *fakeEtcd) MemberList(ctx context.Context, _ ...clientv3.OpOption) (*clientv3.MemberListResponse, error) {
	f = f.root()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("list"); err != nil {
		return nil, err
	}
	out := make([]*pb.Member, 0, len(f.members))
	for _, m := range f.members {
		out = append(out, &pb.Member{ID: m.ID, Name: m.Name, PeerURLs: slices.Clone(m.PeerURLs),
			ClientURLs: slices.Clone(m.ClientURLs), IsLearner: m.IsLearner})
	}
	return &clientv3.MemberListResponse{Members: out}, nil
}

func (f *fakeEtcd) MemberAddAsLearner(ctx context.Context, urls []string) (*clientv3.MemberAddResponse, error) {
	f = f.root()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("add"); err != nil {
		return nil, err
	}
	if byPeerURL(f.members, urls[0]) != nil {
		return nil, rpctypes.ErrPeerURLExist
	}
	for _, m := range f.members {
		if m.IsLearner {
			return nil, rpctypes.ErrTooManyLearners
		}
	}
	id := f.nextID
	if f.etcdIDs {
		id = etcdMemberID(urls, time.Now())
		if f.removed[id] {
			return nil, rpctypes.ErrMemberNotFound
		}
	} else {
		f.nextID++
	}
	m := &pb.Member{ID: id, PeerURLs: urls, IsLearner: true}
	f.members = append(f.members, m)
	return &clientv3.MemberAddResponse{Member: m}, f.leave("add")
}

func (f *fakeEtcd) MemberPromote(ctx context.Context, id uint64) (*clientv3.MemberPromoteResponse, error) {
	f = f.root()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("promote"); err != nil {
		return nil, err
	}
	m := f.byID(id)
	switch {
	case m == nil:
		return nil, rpctypes.ErrMemberNotFound
	case !m.IsLearner:
		return nil, rpctypes.ErrMemberNotLearner
	case f.notReady > 0:
		f.notReady--
		return nil, rpctypes.ErrMemberLearnerNotReady
	}
	m.IsLearner = false
	return &clientv3.MemberPromoteResponse{}, f.leave("promote")
}

func (f *fakeEtcd) MemberRemove(ctx context.Context, id uint64) (*clientv3.MemberRemoveResponse, error) {
	f = f.root()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("remove"); err != nil {
		return nil, err
	}
	if f.byID(id) == nil {
		return nil, rpctypes.ErrMemberNotFound
	}
	f.members = removeMember(f.members, id)
	delete(f.status, id)
	if f.removed == nil {
		f.removed = map[uint64]bool{}
	}
	f.removed[id] = true
	return &clientv3.MemberRemoveResponse{}, f.leave("remove")
}

// etcdMemberID is etcd's computeMemberID for a member added at now with an
// empty cluster name (as MemberAdd does): the first 8 bytes of the SHA-1 of
// the sorted peer URLs and the Unix second.
func etcdMemberID(urls []string, now time.Time) uint64 {
	u := slices.Sorted(slices.Values(urls))
	sum := sha1.Sum([]byte(strings.Join(u, "") + strconv.FormatInt(now.Unix(), 10)))
	return binary.BigEndian.Uint64(sum[:8])
}

func removeMember(ms []*pb.Member, id uint64) []*pb.Member {
	out := ms[:0]
	for _, m := range ms {
		if m.ID != id {
			out = append(out, m)
		}
	}
	return out
}

// memberAt returns the member serving endpoint.
func (f *fakeEtcd) memberAt(endpoint string) *pb.Member {
	for _, m := range f.members {
		for _, u := range m.ClientURLs {
			if u == endpoint {
				return m
			}
		}
	}
	return nil
}

func (f *fakeEtcd) Status(ctx context.Context, endpoint string) (*clientv3.StatusResponse, error) {
	f = f.root()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["status"]++
	m := f.memberAt(endpoint)
	if m == nil || f.status[m.ID] == nil {
		return nil, fmt.Errorf("dial %s: %w", endpoint, context.DeadlineExceeded)
	}
	cur := f.status[m.ID]
	cur.RaftAppliedIndex += f.advance[m.ID]
	st := &clientv3.StatusResponse{Header: &pb.ResponseHeader{ClusterId: cur.Header.ClusterId, MemberId: cur.Header.MemberId,
		Revision: cur.Header.Revision}, Version: cur.Version, Leader: cur.Leader, RaftIndex: cur.RaftIndex,
		RaftAppliedIndex: cur.RaftAppliedIndex, IsLearner: m.IsLearner, Errors: cur.Errors}
	if st.Leader == 0 {
		st.Leader = f.leader
	}
	return st, nil
}

func (f *fakeEtcd) HashKV(ctx context.Context, endpoint string, rev int64) (*clientv3.HashKVResponse, error) {
	f = f.root()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("hash"); err != nil {
		return nil, err
	}
	m := f.memberAt(endpoint)
	if m == nil {
		return nil, context.DeadlineExceeded
	}
	if err := f.hashErr[m.ID]; err != nil {
		return nil, err
	}
	h, ok := f.hash[m.ID]
	if !ok {
		h = 0xdecaf
	}
	return &clientv3.HashKVResponse{Hash: h, HashRevision: rev}, nil
}

func (f *fakeEtcd) AlarmList(ctx context.Context) (*clientv3.AlarmResponse, error) {
	return &clientv3.AlarmResponse{}, nil
}

// MoveLeader works only on the leader's own view, as etcd answers "not
// leader" elsewhere.
func (f *fakeEtcd) MoveLeader(ctx context.Context, to uint64) (*clientv3.MoveLeaderResponse, error) {
	r := f.root()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.enter("move"); err != nil {
		return nil, err
	}
	if m := r.memberAt(f.endpoint); m == nil || m.ID != r.leader {
		return nil, rpctypes.ErrNotLeader
	}
	r.moves = append(r.moves, to)
	r.leader = to
	return &clientv3.MoveLeaderResponse{}, nil
}

// one returns the single-member view of endpoint.
func (f *fakeEtcd) one(endpoint string) (MembershipClient, func(), error) {
	return &fakeEtcd{endpoint: endpoint, parent: f}, func() {}, nil
}

// set changes the cluster under the lock.
func (f *fakeEtcd) set(change func(f *fakeEtcd)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

func (f *fakeEtcd) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}
