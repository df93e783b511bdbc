package etcdlayout

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/localenv"
)

// StartV1alpha2 creates a v1alpha2 tenant etcd in env's simulated cluster,
// starts the stand-in Operator for it (stopped with the environment) and
// waits until all members are Ready voters.
func StartV1alpha2(ctx context.Context, env *localenv.Env, cfg Config) (*Tenant, error) {
	c := env.Cluster()
	if c == nil {
		return nil, fmt.Errorf("%w: the environment has no simulated cluster (set localenv.Config.Cluster)", ErrInvalidConfig)
	}
	l, err := NewV1alpha2(cfg)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(env.RESTConfig())
	if err != nil {
		return nil, err
	}
	dial, err := dialer(env)
	if err != nil {
		return nil, err
	}
	tn := &Tenant{V1alpha2: l, Namespace: l.Config.Namespace, env: env, kube: kube, dial: dial}
	begin := time.Now()
	if err := l.Apply(ctx, env.RESTConfig()); err != nil {
		return nil, err
	}
	ocfg := OperatorConfig{Namespace: tn.Namespace, Dial: tn.DialContext, Logger: env.Logger()}
	if l.Config.DeletionGuard {
		if err := InstallMemberDeletionGuard(ctx, env.RESTConfig(), GuardConfig{}); err != nil {
			return nil, err
		}
		ocfg.User = OperatorUser
	}
	tn.Operator, err = StartOperator(ctx, env.RESTConfig(), ocfg)
	if err != nil {
		return nil, err
	}
	env.OnStop(func() error { tn.Operator.Stop(); return nil })
	if err := tn.WaitAvailable(ctx, int(l.Config.Replicas)); err != nil {
		return nil, err
	}
	if l.Config.DeletionGuard {
		names, err := tn.MemberNames(ctx)
		if err != nil {
			return nil, err
		}
		if err := WaitGuarded(ctx, env.RESTConfig(), tn.Namespace, names[0]); err != nil {
			return nil, err
		}
	}
	tn.ReadyAfter = time.Since(begin)
	return tn, nil
}

// StartV1alpha2T is StartV1alpha2 for tests.
func StartV1alpha2T(t testing.TB, env *localenv.Env, cfg Config) *Tenant {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	tn, err := StartV1alpha2(ctx, env, cfg)
	if err != nil {
		t.Fatalf("start v1alpha2 tenant etcd: %v", err)
	}
	return tn
}

// WaitAvailable waits until the v1alpha2 EtcdCluster reports replicas
// ready members, every member a voter.
func (tn *Tenant) WaitAvailable(ctx context.Context, replicas int) error {
	dyn, err := dynamic.NewForConfig(tn.env.RESTConfig())
	if err != nil {
		return err
	}
	err = wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		ec, err := dyn.Resource(etcdClusters).Namespace(tn.Namespace).Get(ctx, clusterName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ready, _, _ := unstructured.NestedInt64(ec.Object, "status", "readyMembers")
		members, err := dyn.Resource(EtcdMembers).Namespace(tn.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		voters := 0
		for _, m := range members.Items {
			if v, _, _ := unstructured.NestedBool(m.Object, "status", "isVoter"); v && m.GetDeletionTimestamp() == nil {
				voters++
			}
		}
		return int(ready) == replicas && voters == replicas && len(members.Items) == replicas, nil
	})
	if err != nil {
		return fmt.Errorf("wait for %d available v1alpha2 members in %s: %w", replicas, tn.Namespace, err)
	}
	return nil
}

// MemberNames returns the names of the v1alpha2 members that are not being
// deleted, oldest first.
func (tn *Tenant) MemberNames(ctx context.Context) ([]string, error) {
	dyn, err := dynamic.NewForConfig(tn.env.RESTConfig())
	if err != nil {
		return nil, err
	}
	list, err := dyn.Resource(EtcdMembers).Namespace(tn.Namespace).List(ctx, metav1.ListOptions{LabelSelector: labelCluster + "=" + clusterName})
	if err != nil {
		return nil, err
	}
	items := slices.DeleteFunc(list.Items, func(u unstructured.Unstructured) bool { return u.GetDeletionTimestamp() != nil })
	slices.SortFunc(items, func(a, b unstructured.Unstructured) int {
		if c := a.GetCreationTimestamp().Compare(b.GetCreationTimestamp().Time); c != 0 {
			return c
		}
		return strings.Compare(a.GetName(), b.GetName())
	})
	names := make([]string, len(items))
	for i, u := range items {
		names[i] = u.GetName()
	}
	return names, nil
}
