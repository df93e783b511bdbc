package etcdrelocate_test

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/etcdrelocate"
)

// documentedConfig describes a replay of the shell procedure of Cozystack's
// "How to relocate etcd replicas in tenant clusters" page (the baseline the
// library is measured against).
type documentedConfig struct {
	// Kube is a client of the cluster.
	Kube kubernetes.Interface
	// Client returns an etcd client whose only endpoint is the given
	// member's client URL: what `kubectl etcd -p <pod>` reaches through its
	// port-forward.
	Client func(ctx context.Context, endpoint string) (*clientv3.Client, error)
	// Namespace is $NAMESPACE; Member is $RM, the pod to move (etcd-N).
	Namespace string
	Member    string
	// PluginLatency models the start-up of each `kubectl etcd` call (a
	// port-forward and TLS set-up). Default 1s.
	PluginLatency time.Duration
	// WaitTimeout is the `kubectl wait --timeout`. Default 2m.
	WaitTimeout time.Duration
	// CallTimeout bounds each `kubectl etcd` call, as the plugin's own
	// timeout does. Default 30s.
	CallTimeout time.Duration
}

// documentedReport is what the replay did.
type documentedReport struct {
	// Helper is $POD, the Ready member the commands ran through.
	Helper string
	// RemovedID is $RMID as the name lookup found it (0: not found, and
	// the unquoted `[ -n $RMID ]` then runs remove-member with an empty
	// ID, which fails).
	RemovedID uint64
	// AddedID is the ID of the voting member add-member created.
	AddedID uint64
	// WaitErr is the error of the `kubectl wait`, nil if the pod became
	// Ready in time.
	WaitErr error
	// Steps are the steps' durations in order.
	Steps []documentedStep
	// Duration is the whole replay.
	Duration time.Duration
}

// documentedStep is one step of the replay.
type documentedStep struct {
	Name string
	Took time.Duration
	Err  error
}

// replayDocumentedProcedure runs the documented procedure step by step, as the shell
// script does, without stopping at a failing step (the script has no
// `set -e`):
//
//	POD=<first Ready etcd pod other than $RM>
//	RMID=$(kubectl etcd -p $POD members | awk '$2 == "'$RM'" {print $1}')
//	kubectl delete pvc/data-$RM pod/$RM
//	if [ -n $RMID ]; then kubectl etcd -p $POD remove-member "$RMID"; fi
//	kubectl etcd -p $POD add-member "https://$RM.etcd-headless.$NAMESPACE.svc:2380"
//	kubectl wait --for=condition=ready pod $RM --timeout=2m
//	kubectl etcd -p $RM members
func replayDocumentedProcedure(ctx context.Context, cfg documentedConfig) (*documentedReport, error) {
	if cfg.PluginLatency == 0 {
		cfg.PluginLatency = time.Second
	}
	if cfg.WaitTimeout == 0 {
		cfg.WaitTimeout = 2 * time.Minute
	}
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = 30 * time.Second
	}
	rep := &documentedReport{}
	start := time.Now()
	defer func() { rep.Duration = time.Since(start) }()
	step := func(name string, f func() error) error {
		t0 := time.Now()
		err := f()
		rep.Steps = append(rep.Steps, documentedStep{Name: name, Took: time.Since(t0), Err: err})
		return err
	}
	ns, rm := cfg.Namespace, cfg.Member
	url := func(pod string) string { return etcdrelocate.PodClientURL(pod, "etcd-headless", ns) }
	plugin := func(pod string, f func(context.Context, *clientv3.Client) error) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(cfg.PluginLatency):
		}
		c, err := cfg.Client(ctx, url(pod))
		if err != nil {
			return err
		}
		defer c.Close()
		cctx, cancel := context.WithTimeout(ctx, cfg.CallTimeout)
		defer cancel()
		return f(cctx, c)
	}
	if err := step("POD=<a Ready member>", func() error {
		var err error
		rep.Helper, err = readyHelper(ctx, cfg.Kube, ns, rm)
		return err
	}); err != nil {
		return rep, err
	}
	_ = step("RMID=$(kubectl etcd members | awk by name)", func() error {
		return plugin(rep.Helper, func(ctx context.Context, c *clientv3.Client) error {
			ml, err := c.MemberList(ctx)
			if err != nil {
				return err
			}
			for _, m := range ml.Members {
				if m.Name == rm {
					rep.RemovedID = m.ID
				}
			}
			return nil
		})
	})
	_ = step("kubectl delete pvc/data-$RM pod/$RM", func() error { return deleteAndWait(ctx, cfg.Kube, ns, "data-"+rm, rm) })
	_ = step("kubectl etcd remove-member $RMID", func() error {
		if rep.RemovedID == 0 {
			return fmt.Errorf(`remove-member "": the unquoted [ -n $RMID ] let an empty ID through`)
		}
		return plugin(rep.Helper, func(ctx context.Context, c *clientv3.Client) error {
			_, err := c.MemberRemove(ctx, rep.RemovedID)
			return err
		})
	})
	_ = step("kubectl etcd add-member (voting)", func() error {
		return plugin(rep.Helper, func(ctx context.Context, c *clientv3.Client) error {
			r, err := c.MemberAdd(ctx, []string{etcdrelocate.PodPeerURL(rm, "etcd-headless", ns)})
			if err == nil {
				rep.AddedID = r.Member.ID
			}
			return err
		})
	})
	_ = step("kubectl wait --for=condition=ready pod/$RM", func() error {
		rep.WaitErr = waitReady(ctx, cfg.Kube, ns, rm, cfg.WaitTimeout)
		return rep.WaitErr
	})
	_ = step("kubectl etcd -p $RM members", func() error {
		return plugin(rm, func(ctx context.Context, c *clientv3.Client) error {
			_, err := c.MemberList(ctx)
			return err
		})
	})
	return rep, nil
}

// readyHelper returns the first Ready etcd pod other than rm.
func readyHelper(ctx context.Context, kube kubernetes.Interface, ns, rm string) (string, error) {
	pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=etcd"})
	if err != nil {
		return "", err
	}
	for _, p := range pods.Items {
		if p.Name != rm && podReady(&p) {
			return p.Name, nil
		}
	}
	return "", fmt.Errorf("no Ready etcd pod other than %s", rm)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// deleteAndWait deletes the claim, then the pod, and waits until both (by
// UID) are gone, as kubectl delete does.
func deleteAndWait(ctx context.Context, kube kubernetes.Interface, ns, pvc, pod string) error {
	core := kube.CoreV1()
	var uids []string
	if c, err := core.PersistentVolumeClaims(ns).Get(ctx, pvc, metav1.GetOptions{}); err == nil {
		uids = append(uids, string(c.UID))
		if err := core.PersistentVolumeClaims(ns).Delete(ctx, pvc, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	if p, err := core.Pods(ns).Get(ctx, pod, metav1.GetOptions{}); err == nil {
		uids = append(uids, string(p.UID))
		if err := core.Pods(ns).Delete(ctx, pod, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	for {
		c, cerr := core.PersistentVolumeClaims(ns).Get(ctx, pvc, metav1.GetOptions{})
		p, perr := core.Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		gone := func(uid string) bool {
			return !(cerr == nil && string(c.UID) == uid) && !(perr == nil && string(p.UID) == uid)
		}
		all := true
		for _, u := range uids {
			all = all && gone(u)
		}
		if all {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitReady waits until the pod is Ready, as kubectl wait does.
func waitReady(ctx context.Context, kube kubernetes.Interface, ns, pod string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		p, err := kube.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		if err == nil && podReady(p) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out waiting for the condition on pods/%s", pod)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
