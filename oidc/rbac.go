package oidc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Labels on every object this package renders for a cluster; the RBAC
// planner finds the bindings it owns by them.
const (
	labelManagedBy = "app.kubernetes.io/managed-by"
	labelInstance  = "app.kubernetes.io/instance"
	managedByValue = "cozystack-oidc"
)

// BindingName returns the deterministic ClusterRoleBinding name for a user:
// "cozystack-oidc-" and the first 16 hex digits of sha256("<release>-<email>").
func BindingName(release, email string) string {
	sum := sha256.Sum256([]byte(release + "-" + email))
	return "cozystack-oidc-" + hex.EncodeToString(sum[:])[:16]
}

// Bindings returns the ClusterRoleBindings of cluster c for users, sorted by
// name, as the chart's bootstrap Job leaves them, and agreeing with
// tenant.KubernetesSpec.Check:
//
//   - a user without an email is refused (ErrInvalidUser, also matching
//     tenant.ErrEmptyName; Check's K-oidc-email-empty): the chart renders a
//     binding with an empty User subject, the tenant apiserver refuses it,
//     and the Job, and with it the Helm release, fails;
//   - an email listed twice gives one binding, with the last entry's role
//     (Check warns, K-oidc-email-duplicate): the Job applies one binding
//     per entry, all of one name, so the last apply wins;
//   - a role other than admin and view is refused (ErrInvalidUser; the
//     schema's enum, S-oidc-users).
func Bindings(c ref.Cluster, users []tenant.OIDCUser) ([]rbacv1.ClusterRoleBinding, error) {
	index := map[string]int{}
	out := make([]rbacv1.ClusterRoleBinding, 0, len(users))
	for _, u := range users {
		role := u.Role.ClusterRole()
		switch {
		case u.Email == "":
			return nil, fmt.Errorf("%w: %w: the chart would render a binding with an empty subject, which the tenant apiserver refuses", ErrInvalidUser, tenant.ErrEmptyName)
		case role == "":
			return nil, fmt.Errorf("%w: %s: role %q (want admin or view)", ErrInvalidUser, u.Email, u.Role)
		}
		if i, dup := index[u.Email]; dup {
			out[i].RoleRef.Name = role // the chart's Job applies the later entry over the earlier
			continue
		}
		index[u.Email] = len(out)
		out = append(out, rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: BindingName(c.Release(), u.Email), Labels: labels(c)},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u.Email}},
		})
	}
	slices.SortFunc(out, func(a, b rbacv1.ClusterRoleBinding) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Action is what an RBAC plan does to one binding.
type Action string

const (
	// ActionCreate creates a missing binding.
	ActionCreate Action = "create"
	// ActionUpdate rewrites a binding's subjects or labels.
	ActionUpdate Action = "update"
	// ActionReplace deletes and recreates a binding whose role changed
	// (roleRef is immutable).
	ActionReplace Action = "replace"
	// ActionDelete prunes a binding no user needs any more.
	ActionDelete Action = "delete"
)

// RBACChange is one step of an RBAC plan.
type RBACChange struct {
	// Action is what Execute does with Binding.
	Action Action
	// Binding is the desired binding; for ActionDelete, the one to delete.
	Binding rbacv1.ClusterRoleBinding
}

// RBACPlan is the difference between the bindings users need and those a
// cluster has. It is a plain value: print it for a dry run, then carry it
// out with RBAC.Execute.
type RBACPlan struct {
	// Cluster is the tenant cluster the plan is for.
	Cluster ref.Cluster
	// Changes are the steps, in order.
	Changes []RBACChange
	// Unchanged counts the bindings already as desired.
	Unchanged int
	// Skipped says why nothing was compared, such as the cluster's OIDC
	// being off (mode None, where the chart's bootstrap Job leaves bindings
	// alone); empty for a plan made by RBAC.Plan.
	Skipped string
}

// planRBAC compares the bindings users need with existing, the bindings in
// the cluster that carry this cluster's labels, and returns the changes.
func planRBAC(c ref.Cluster, users []tenant.OIDCUser, existing []rbacv1.ClusterRoleBinding) (*RBACPlan, error) {
	desired, err := Bindings(c, users)
	if err != nil {
		return nil, err
	}
	have := map[string]rbacv1.ClusterRoleBinding{}
	for _, b := range existing {
		have[b.Name] = b
	}
	plan := &RBACPlan{Cluster: c}
	for _, d := range desired {
		cur, ok := have[d.Name]
		delete(have, d.Name)
		switch {
		case !ok:
			plan.Changes = append(plan.Changes, RBACChange{ActionCreate, d})
		case cur.RoleRef != d.RoleRef:
			plan.Changes = append(plan.Changes, RBACChange{ActionReplace, d})
		case !slices.Equal(cur.Subjects, d.Subjects) || !labelsInclude(cur.Labels, d.Labels):
			plan.Changes = append(plan.Changes, RBACChange{ActionUpdate, d})
		default:
			plan.Unchanged++
		}
	}
	for _, name := range slices.Sorted(maps.Keys(have)) {
		plan.Changes = append(plan.Changes, RBACChange{ActionDelete, have[name]})
	}
	return plan, nil
}

func labelsInclude(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// Empty reports whether the plan changes nothing.
func (p *RBACPlan) Empty() bool { return len(p.Changes) == 0 }

// String renders the plan one change per line, for a dry run.
func (p *RBACPlan) String() string {
	if p.Skipped != "" {
		return fmt.Sprintf("rbac %s: left as it is: %s\n", p.Cluster, p.Skipped)
	}
	if p.Empty() {
		return fmt.Sprintf("rbac %s: up to date (%d bindings)\n", p.Cluster, p.Unchanged)
	}
	var b strings.Builder
	for _, ch := range p.Changes {
		subject := ""
		if len(ch.Binding.Subjects) > 0 {
			subject = ch.Binding.Subjects[0].Name
		}
		fmt.Fprintf(&b, "%-7s %s %s -> %s\n", ch.Action, ch.Binding.Name, subject, ch.Binding.RoleRef.Name)
	}
	return b.String()
}

// RBACConfig configures an RBAC client.
type RBACConfig struct {
	// Clientset reaches the tenant cluster. Required (NewRBACForConfig
	// builds it from a rest.Config).
	Clientset kubernetes.Interface
}

// RBAC keeps the OIDC users' ClusterRoleBindings of one tenant cluster:
// Plan observes and compares, Execute carries a plan out, Sync does both.
type RBAC struct {
	c  ref.Cluster
	cs kubernetes.Interface
}

// NewRBAC returns an RBAC client for cluster c.
func NewRBAC(c ref.Cluster, cfg RBACConfig) (*RBAC, error) {
	if err := checkCluster(c); err != nil {
		return nil, err
	}
	if cfg.Clientset == nil {
		return nil, invalidf("RBACConfig.Clientset is required")
	}
	return &RBAC{c: c, cs: cfg.Clientset}, nil
}

// NewRBACForConfig returns an RBAC client for cluster c, reached through
// rc; cfg.Clientset is built from rc when it is nil.
func NewRBACForConfig(rc *rest.Config, c ref.Cluster, cfg RBACConfig) (*RBAC, error) {
	if cfg.Clientset == nil {
		cs, err := kubernetes.NewForConfig(rc)
		if err != nil {
			return nil, fmt.Errorf("oidc: clientset: %w", err)
		}
		cfg.Clientset = cs
	}
	return NewRBAC(c, cfg)
}

// List returns the bindings in the cluster that carry the cluster's labels.
func (r *RBAC) List(ctx context.Context) ([]rbacv1.ClusterRoleBinding, error) {
	sel := k8slabels.SelectorFromSet(labels(r.c)).String()
	list, err := r.cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list cluster role bindings: %w", err)
	}
	return list.Items, nil
}

// Plan lists the cluster's bindings and compares them with what users
// need: the ClusterRoleBindings users need (admin: cluster-admin, view:
// view) are created, updated or replaced (roleRef is immutable), and the
// bindings of this cluster's release no user needs are deleted. The plan
// is a printable value (a dry run); Execute carries it out.
func (r *RBAC) Plan(ctx context.Context, users []tenant.OIDCUser) (*RBACPlan, error) {
	existing, err := r.List(ctx)
	if err != nil {
		return nil, err
	}
	return planRBAC(r.c, users, existing)
}

// Execute carries out the plan. Each step tolerates the state a previous,
// interrupted Execute may have left, so re-running a plan (or re-planning)
// is safe. It stops at the first error or when ctx ends.
func (r *RBAC) Execute(ctx context.Context, p *RBACPlan) error {
	if p.Cluster != r.c {
		return invalidf("plan for %s executed on %s", p.Cluster, r.c)
	}
	crbs := r.cs.RbacV1().ClusterRoleBindings()
	for _, ch := range p.Changes {
		if err := ctx.Err(); err != nil {
			return err
		}
		b := ch.Binding
		var err error
		switch ch.Action {
		case ActionDelete:
			err = ignoreNotFound(crbs.Delete(ctx, b.Name, metav1.DeleteOptions{}))
		case ActionReplace:
			if err = ignoreNotFound(crbs.Delete(ctx, b.Name, metav1.DeleteOptions{})); err == nil {
				err = createOrUpdate(ctx, r.cs, b)
			}
		default:
			err = createOrUpdate(ctx, r.cs, b)
		}
		if err != nil {
			return fmt.Errorf("%s cluster role binding %s: %w", ch.Action, b.Name, err)
		}
	}
	return nil
}

// Sync plans and executes: after it returns nil, exactly users have
// bindings. The plan is returned for display.
func (r *RBAC) Sync(ctx context.Context, users []tenant.OIDCUser) (*RBACPlan, error) {
	plan, err := r.Plan(ctx, users)
	if err != nil {
		return nil, err
	}
	return plan, r.Execute(ctx, plan)
}

func createOrUpdate(ctx context.Context, cs kubernetes.Interface, b rbacv1.ClusterRoleBinding) error {
	crbs := cs.RbacV1().ClusterRoleBindings()
	_, err := crbs.Create(ctx, &b, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	cur, err := crbs.Get(ctx, b.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if cur.RoleRef != b.RoleRef {
		if err := crbs.Delete(ctx, b.Name, metav1.DeleteOptions{}); err != nil {
			return err
		}
		_, err = crbs.Create(ctx, &b, metav1.CreateOptions{})
		return err
	}
	cur.Subjects = b.Subjects
	if cur.Labels == nil {
		cur.Labels = map[string]string{}
	}
	maps.Copy(cur.Labels, b.Labels)
	_, err = crbs.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
