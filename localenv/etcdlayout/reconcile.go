package etcdlayout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// reconcile runs one pass of the stand-in operator; see Operator. The
// member controller's part (finalizers, Pods and PVCs) runs first, then the
// cluster controller's: the locking pattern, bootstrap, then converge.
func (o *Operator) reconcile(ctx context.Context) error {
	ns := o.cfg.Namespace
	cluster, err := o.c.dyn.Resource(etcdClusters).Namespace(ns).Get(ctx, clusterName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := o.ensureClusterObjects(ctx, cluster); err != nil {
		return err
	}
	members, err := o.members(ctx)
	if err != nil {
		return err
	}
	for _, m := range members {
		if m.deleting {
			if err := o.removeMember(ctx, m, members); err != nil {
				return fmt.Errorf("remove member %s: %w", m.name, err)
			}
		}
	}
	clusterID, _, _ := unstructured.NestedString(cluster.Object, "status", "clusterID")
	running, ready := 0, 0
	for i, m := range members {
		if m.deleting {
			continue
		}
		running++
		if m.initialCluster != "" {
			if err := o.ensureMemberObjects(ctx, m, clusterID == ""); err != nil {
				return fmt.Errorf("member %s: %w", m.name, err)
			}
		}
		if members[i].ready = o.podReady(ctx, m.name); members[i].ready {
			ready++
		}
	}
	if stop, err := o.lockingPattern(ctx, cluster, running, ready); stop || err != nil {
		return err
	}
	if clusterID == "" {
		return o.bootstrap(ctx, cluster, members)
	}
	return o.converge(ctx, cluster, members, running, ready)
}

// bootstrap creates the seed member and, once its etcd answers, latches the
// cluster ID.
func (o *Operator) bootstrap(ctx context.Context, cluster *unstructured.Unstructured, members []member) error {
	if len(members) == 0 {
		_, err := o.createMember(ctx, cluster, true)
		return err
	}
	var seed *member
	for i := range members {
		if members[i].bootstrap && !members[i].deleting {
			seed = &members[i]
		}
	}
	if seed == nil {
		return errors.New("no seed member")
	}
	cli, err := o.etcdClient(ctx, []string{seed.name})
	if err != nil {
		return err
	}
	defer cli.Close()
	resp, err := cli.MemberList(ctx)
	if err != nil {
		return fmt.Errorf("discover cluster through seed %s: %w", seed.name, err)
	}
	if len(resp.Members) != 1 || !slices.Contains(resp.Members[0].PeerURLs, MemberPeerURL(o.cfg.Namespace, seed.name)) {
		return fmt.Errorf("seed %s reports an unexpected member list", seed.name)
	}
	if err := o.patchStatus(ctx, EtcdMembers, seed.name, map[string]any{
		"memberID": memberIDString(resp.Members[0].ID), "isVoter": true,
	}); err != nil {
		return err
	}
	o.log.Info("cluster bootstrapped", "namespace", o.cfg.Namespace, "seed", seed.name)
	return o.patchStatus(ctx, etcdClusters, clusterName, map[string]any{"clusterID": strconv.FormatUint(resp.Header.ClusterId, 16)})
}

// converge keeps members' status in line with etcd's member list; unless
// a member is being deleted (the real operator makes one membership change
// at a time) it completes a half-added member, promotes learners, reports
// the status and scales toward status.observed.replicas: up one member at
// a time once all are Ready, down by deleting the newest member.
func (o *Operator) converge(ctx context.Context, cluster *unstructured.Unstructured, members []member, running, ready int) error {
	var voters []string
	deleting := false
	for _, m := range members {
		deleting = deleting || m.deleting
		if !m.deleting && m.isVoter {
			voters = append(voters, m.name)
		}
	}
	if len(voters) == 0 {
		return errors.New("no voter to talk to")
	}
	cli, err := o.etcdClient(ctx, voters)
	if err != nil {
		return err
	}
	defer cli.Close()
	list, err := cli.MemberList(ctx)
	if err != nil {
		return err
	}
	byURL := map[string]*etcdserverpb.Member{}
	for _, em := range list.Members {
		for _, u := range em.PeerURLs {
			byURL[u] = em
		}
	}
	var half []string
	type learner struct {
		name string
		id   uint64
	}
	var learners []learner
	voterCount, pending := 0, false
	for _, m := range members {
		if m.deleting {
			continue
		}
		em := byURL[MemberPeerURL(o.cfg.Namespace, m.name)]
		switch {
		case m.initialCluster == "":
			half = append(half, m.name)
		case em == nil:
			pending = true
		case em.IsLearner:
			pending = true
			learners = append(learners, learner{m.name, em.ID})
		default:
			voterCount++
			if !m.isVoter || m.memberID == "" {
				if err := o.patchStatus(ctx, EtcdMembers, m.name, map[string]any{
					"memberID": memberIDString(em.ID), "isVoter": true}); err != nil {
					return err
				}
			}
		}
	}
	if deleting {
		o.log.Debug("waiting for in-flight member deletion", "namespace", o.cfg.Namespace)
		return nil
	}
	for _, name := range half {
		// Created, not yet added: finish what a crash interrupted.
		return o.join(ctx, cli, name)
	}
	for _, l := range learners {
		o.promote(ctx, cli, l.name, l.id)
	}
	if err := o.updateStatus(ctx, cluster, running, ready, voterCount); err != nil {
		return err
	}
	if pending && running <= observedReplicas(cluster) {
		// A learner or an unregistered member: promote it before adding
		// another (etcd allows one learner at a time); a scale-down goes
		// ahead, as in the real operator.
		return nil
	}
	return o.scale(ctx, cluster, cli, members, running, ready)
}

// scale adds one member when fewer than status.observed.replicas run and
// all are Ready, or deletes the newest member when more run.
func (o *Operator) scale(ctx context.Context, cluster *unstructured.Unstructured, cli *clientv3.Client, members []member, running, ready int) error {
	desired := observedReplicas(cluster)
	switch {
	case running < desired && ready == running:
		m, err := o.createMember(ctx, cluster, false)
		if err != nil {
			return err
		}
		return o.join(ctx, cli, m)
	case running > desired:
		victim := newest(members)
		o.log.Info("scaling down", "namespace", o.cfg.Namespace, "member", victim.GetName())
		err := o.c.dyn.Resource(EtcdMembers).Namespace(o.cfg.Namespace).Delete(ctx, victim.GetName(), metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	return nil
}

// newest is the real operator's scale-down victim: the member created
// last, ties broken by the greater name.
func newest(members []member) *unstructured.Unstructured {
	var v *unstructured.Unstructured
	for _, m := range members {
		if m.deleting {
			continue
		}
		if v == nil {
			v = m.obj
			continue
		}
		a, b := m.obj.GetCreationTimestamp(), v.GetCreationTimestamp()
		if a.After(b.Time) || (a.Equal(&b) && m.name > v.GetName()) {
			v = m.obj
		}
	}
	return v
}

// memberIDString is status.memberID as the real operator writes it: hex,
// zero-padded to 16 digits.
func memberIDString(id uint64) string { return fmt.Sprintf("%016x", id) }

// join adds a member as a learner (unless its peer URL is registered
// already) and patches spec.initialCluster from etcd's member list.
func (o *Operator) join(ctx context.Context, cli *clientv3.Client, name string) error {
	ns := o.cfg.Namespace
	url := MemberPeerURL(ns, name)
	list, err := cli.MemberList(ctx)
	if err != nil {
		return err
	}
	registered := slices.ContainsFunc(list.Members, func(m *etcdserverpb.Member) bool { return slices.Contains(m.PeerURLs, url) })
	if !registered {
		resp, err := cli.MemberAddAsLearner(ctx, []string{url})
		if err != nil {
			return fmt.Errorf("add %s as learner: %w", name, err)
		}
		list.Members = resp.Members
		o.log.Info("member added as learner", "namespace", ns, "member", name)
	}
	var initial []string
	for _, em := range list.Members {
		for _, u := range em.PeerURLs {
			// Unstarted members have no name yet; ours are named after
			// their host.
			host := strings.TrimPrefix(u, "https://")
			initial = append(initial, strings.SplitN(host, ".", 2)[0]+"="+u)
		}
	}
	slices.Sort(initial)
	patch := fmt.Sprintf(`{"spec":{"initialCluster":%q}}`, strings.Join(initial, ","))
	_, err = o.c.dyn.Resource(EtcdMembers).Namespace(ns).Patch(ctx, name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{})
	return err
}

// promote promotes a learner once etcd accepts it (it refuses until the
// learner has caught up).
func (o *Operator) promote(ctx context.Context, cli *clientv3.Client, name string, id uint64) {
	_, err := cli.MemberPromote(ctx, id)
	switch {
	case err == nil:
		o.log.Info("learner promoted", "namespace", o.cfg.Namespace, "member", name)
		_ = o.patchStatus(ctx, EtcdMembers, name, map[string]any{"memberID": memberIDString(id), "isVoter": true})
	case errors.Is(err, rpctypes.ErrMemberLearnerNotReady):
	default:
		o.log.Debug("promote learner", "member", name, "err", err)
	}
}

// removeMember is the finalizer: MemberRemove through the other members,
// then release the EtcdMember.
func (o *Operator) removeMember(ctx context.Context, m member, all []member) error {
	if !slices.Contains(m.obj.GetFinalizers(), memberFinalizer) {
		return nil
	}
	var peers []string
	for _, p := range all {
		if !p.deleting && p.isVoter {
			peers = append(peers, p.name)
		}
	}
	if len(peers) > 0 {
		cli, err := o.etcdClient(ctx, peers)
		if err != nil {
			return err
		}
		defer cli.Close()
		list, err := cli.MemberList(ctx)
		if err != nil {
			return err
		}
		url := MemberPeerURL(o.cfg.Namespace, m.name)
		for _, em := range list.Members {
			if slices.Contains(em.PeerURLs, url) {
				if _, err := cli.MemberRemove(ctx, em.ID); err != nil && !errors.Is(err, rpctypes.ErrMemberNotFound) {
					return err
				}
				o.log.Info("member removed from etcd", "namespace", o.cfg.Namespace, "member", m.name)
			}
		}
	}
	fins := slices.DeleteFunc(slices.Clone(m.obj.GetFinalizers()), func(f string) bool { return f == memberFinalizer })
	m.obj.SetFinalizers(fins)
	_, err := o.c.dyn.Resource(EtcdMembers).Namespace(o.cfg.Namespace).Update(ctx, m.obj, metav1.UpdateOptions{})
	return err
}

func (o *Operator) podReady(ctx context.Context, name string) bool {
	p, err := o.c.kube.CoreV1().Pods(o.cfg.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
