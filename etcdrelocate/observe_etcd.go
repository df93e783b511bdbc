package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdView is etcd's side of a State.
type etcdView struct {
	members []Member
	alarms  []Alarm
	hashRev int64
}

// observeEtcd reads MemberList through endpoints, then Status and HashKV from
// every member on its own client URL, and the alarms.
func observeEtcd(ctx context.Context, conn *connector, endpoints []string) (*etcdView, error) {
	cli, err := conn.client(endpoints...)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	cctx, cancel := conn.callCtx(ctx)
	resp, err := cli.MemberList(cctx)
	cancel()
	if err != nil {
		// Without quorum a linearizable read fails; a serializable one
		// still tells which members exist.
		cctx, cancel := conn.callCtx(ctx)
		resp, err = cli.MemberList(cctx, clientv3.WithSerializable())
		cancel()
		if err != nil {
			return nil, fmt.Errorf("list members: %w", err)
		}
	}
	v := &etcdView{}
	for _, pm := range resp.Members {
		v.members = append(v.members, Member{ID: pm.ID, Name: pm.Name, PeerURLs: pm.PeerURLs, ClientURLs: pm.ClientURLs, IsLearner: pm.IsLearner})
	}
	clients := statusAll(ctx, conn, v.members)
	cctx, cancel = conn.callCtx(ctx)
	alarms, err := cli.AlarmList(cctx)
	cancel()
	if err == nil {
		for _, a := range alarms.Alarms {
			v.alarms = append(v.alarms, Alarm{MemberID: a.MemberID, Type: a.Alarm.String()})
		}
	}
	v.hashRev = hashAll(ctx, conn, v.members, clients)
	return v, nil
}

// statusAll asks every member for its Status, in parallel, and returns the
// per-member clients (nil where none could be made) for further calls.
func statusAll(ctx context.Context, conn *connector, ms []Member) []*clientv3.Client {
	clients := make([]*clientv3.Client, len(ms))
	var wg sync.WaitGroup
	for i := range ms {
		m := &ms[i]
		if len(m.ClientURLs) == 0 {
			m.StatusError = "no client URL (the member has not started)"
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := conn.member(m.ClientURLs[0])
			if err != nil {
				m.StatusError = err.Error()
				return
			}
			clients[i] = c
			st, err := memberStatus(ctx, conn, c, m.ClientURLs[0])
			if err != nil {
				m.StatusError = err.Error()
				return
			}
			m.Status = st
		}()
	}
	wg.Wait()
	return clients
}

// memberStatus calls Status on one endpoint.
func memberStatus(ctx context.Context, conn *connector, c *clientv3.Client, endpoint string) (*MemberStatus, error) {
	cctx, cancel := context.WithTimeout(ctx, min(conn.callOr(2*time.Second), 2*time.Second))
	defer cancel()
	r, err := c.Status(cctx, endpoint)
	if err != nil {
		conn.drop(endpoint)
		return nil, fmt.Errorf("status %s: %w", endpoint, err)
	}
	return statusOf(r), nil
}

func statusOf(r *clientv3.StatusResponse) *MemberStatus {
	return &MemberStatus{
		Version: r.Version, ClusterID: r.Header.ClusterId, MemberID: r.Header.MemberId, Leader: r.Leader,
		RaftTerm: r.RaftTerm, RaftIndex: r.RaftIndex, RaftAppliedIndex: r.RaftAppliedIndex, Revision: r.Header.Revision,
		DBSize: r.DbSize, DBSizeInUse: r.DbSizeInUse, IsLearner: r.IsLearner, Errors: r.Errors,
	}
}

// hashAll takes HashKV on every voter that answered Status, at the lowest
// revision they all have, and returns that revision (0 if none). If the
// revision is compacted meanwhile it refreshes the statuses and tries a newer
// one.
func hashAll(ctx context.Context, conn *connector, ms []Member, clients []*clientv3.Client) int64 {
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
		if hashAt(ctx, conn, ms, clients, rev) {
			return rev
		}
		for i := range ms {
			if ms[i].Status != nil && clients[i] != nil {
				if st, err := memberStatus(ctx, conn, clients[i], ms[i].ClientURLs[0]); err == nil {
					ms[i].Status.Revision = st.Revision
				}
			}
		}
	}
	return 0
}

// hashAt fills Member.Hash at rev; false if rev was compacted.
func hashAt(ctx context.Context, conn *connector, ms []Member, clients []*clientv3.Client, rev int64) bool {
	for i := range ms {
		m := &ms[i]
		m.HashOK = false
		if !m.Voter() || m.Status == nil || clients[i] == nil {
			continue
		}
		cctx, cancel := conn.callCtx(ctx)
		h, err := clients[i].HashKV(cctx, m.ClientURLs[0], rev)
		cancel()
		if errors.Is(err, rpctypes.ErrCompacted) {
			return false
		}
		if err == nil {
			m.Hash, m.HashOK = h.Hash, true
		}
	}
	return true
}

func (c *connector) callOr(d time.Duration) time.Duration {
	if c.call > 0 {
		return c.call
	}
	return d
}
