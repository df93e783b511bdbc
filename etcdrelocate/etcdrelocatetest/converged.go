package etcdrelocatetest

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Converged checks that the cluster cli reaches has 3 voters and no
// learner, and that every member's HashKV is equal at one revision (the
// first endpoint's): what a relocation must leave behind.
func Converged(ctx context.Context, cli *clientv3.Client) error {
	ml, err := cli.MemberList(ctx)
	if err != nil {
		return err
	}
	if len(ml.Members) != 3 {
		return fmt.Errorf("%d members, want 3", len(ml.Members))
	}
	st, err := cli.Status(ctx, cli.Endpoints()[0])
	if err != nil {
		return err
	}
	rev := st.Header.Revision
	var first uint32
	for i, m := range ml.Members {
		if m.IsLearner {
			return fmt.Errorf("%s is a learner", m.Name)
		}
		if len(m.ClientURLs) == 0 {
			return fmt.Errorf("%s has no client URL", m.Name)
		}
		h, err := cli.HashKV(ctx, m.ClientURLs[0], rev)
		if err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
		if i == 0 {
			first = h.Hash
		} else if h.Hash != first {
			return fmt.Errorf("HashKV at revision %d: %s has %d, %s %d", rev, ml.Members[0].Name, first, m.Name, h.Hash)
		}
	}
	return nil
}
