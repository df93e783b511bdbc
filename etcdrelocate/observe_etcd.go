package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdView is etcd's side of a State.
type etcdView struct {
	members []Member
	alarms  []Alarm
	hashRev int64
}

// observeEtcd reads MemberList, then Status and HashKV from every member on
// its own client URL, and the alarms, through ops.api.
func observeEtcd(ctx context.Context, ops *memberOps) (*etcdView, error) {
	cctx, cancel := ops.callCtx(ctx)
	resp, err := ops.api.MemberList(cctx)
	cancel()
	if err != nil {
		// Without quorum a linearizable read fails; a serializable one
		// still tells which members exist.
		cctx, cancel := ops.callCtx(ctx)
		resp, err = ops.api.MemberList(cctx, clientv3.WithSerializable())
		cancel()
		if err != nil {
			return nil, fmt.Errorf("list members: %w", err)
		}
	}
	v := &etcdView{}
	for _, pm := range resp.Members {
		v.members = append(v.members, Member{ID: pm.ID, Name: pm.Name, PeerURLs: pm.PeerURLs, ClientURLs: pm.ClientURLs, IsLearner: pm.IsLearner})
	}
	statusAll(ctx, ops, v.members)
	cctx, cancel = ops.callCtx(ctx)
	alarms, err := ops.api.AlarmList(cctx)
	cancel()
	if err == nil {
		for _, a := range alarms.Alarms {
			v.alarms = append(v.alarms, Alarm{MemberID: a.MemberID, Type: a.Alarm.String()})
		}
	}
	v.hashRev = hashAll(ctx, ops, v.members)
	return v, nil
}

// statusAll asks every member for its Status, in parallel.
func statusAll(ctx context.Context, ops *memberOps, ms []Member) {
	var wg sync.WaitGroup
	for i := range ms {
		m := &ms[i]
		if len(m.ClientURLs) == 0 {
			m.StatusError = "no client URL (the member has not started)"
			continue
		}
		wg.Go(func() {
			st, err := ops.status(ctx, m.ClientURLs[0])
			if err != nil {
				m.StatusError = err.Error()
				return
			}
			m.Status = st
		})
	}
	wg.Wait()
}

// hashAll takes HashKV on every voter that answered Status, at the lowest
// revision they all have, and returns that revision (0 if none). If the
// revision is compacted meanwhile it refreshes the statuses and tries a newer
// one. A voter whose hash could not be taken has HashOK false and
// HashError saying why.
func hashAll(ctx context.Context, ops *memberOps, ms []Member) int64 {
	for attempt := 0; attempt < 3; attempt++ {
		var rev int64
		for _, m := range ms {
			if m.Voter() && m.Status != nil && (rev == 0 || m.Status.Revision < rev) {
				rev = m.Status.Revision
			}
		}
		if rev == 0 {
			return 0
		}
		if hashAt(ctx, ops, ms, rev) {
			return rev
		}
		for i := range ms {
			if ms[i].Status != nil {
				if st, err := ops.status(ctx, ms[i].ClientURLs[0]); err == nil {
					ms[i].Status.Revision = st.Revision
				}
			}
		}
	}
	for i := range ms {
		if ms[i].Voter() && ms[i].Status != nil {
			ms[i].HashError = "every revision tried was compacted before HashKV reached it"
		}
	}
	return 0
}

// hashAt fills Member.Hash at rev on every voter in parallel; false if rev
// was compacted.
func hashAt(ctx context.Context, ops *memberOps, ms []Member, rev int64) bool {
	var wg sync.WaitGroup
	var mu sync.Mutex
	compacted := false
	for i := range ms {
		m := &ms[i]
		m.HashOK, m.HashError = false, ""
		if !m.Voter() || m.Status == nil {
			continue
		}
		wg.Go(func() {
			cctx, cancel := ops.callCtx(ctx)
			h, err := ops.api.HashKV(cctx, m.ClientURLs[0], rev)
			cancel()
			switch {
			case errors.Is(err, rpctypes.ErrCompacted):
				mu.Lock()
				compacted = true
				mu.Unlock()
			case err != nil:
				m.HashError = err.Error()
			default:
				m.Hash, m.HashOK = h.Hash, true
			}
		})
	}
	wg.Wait()
	return !compacted
}
