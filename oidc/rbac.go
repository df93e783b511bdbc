package oidc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// Labels on every object this package renders for a cluster; the RBAC
// planner finds the bindings it owns by them.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelInstance  = "app.kubernetes.io/instance"
	ManagedByValue = "cozystack-oidc"
)

// Role is what a user may do in a tenant cluster.
type Role string

const (
	// RoleAdmin binds the cluster-admin ClusterRole.
	RoleAdmin Role = "admin"
	// RoleView binds the view ClusterRole.
	RoleView Role = "view"
)

// ClusterRole returns the ClusterRole a role binds, "" for an unknown role.
func (r Role) ClusterRole() string {
	switch r {
	case RoleAdmin:
		return "cluster-admin"
	case RoleView:
		return "view"
	}
	return ""
}

// User is a person granted a role; Email is matched against the token's
// email claim (the username).
type User struct {
	Email string
	Role  Role
}

// BindingName returns the deterministic ClusterRoleBinding name for a user:
// "cozystack-oidc-" and the first 16 hex digits of sha256("<release>-<email>").
func BindingName(release, email string) string {
	sum := sha256.Sum256([]byte(release + "-" + email))
	return "cozystack-oidc-" + hex.EncodeToString(sum[:])[:16]
}

// Bindings returns the ClusterRoleBindings for users, sorted by name.
func (c Cluster) Bindings(users []User) ([]rbacv1.ClusterRoleBinding, error) {
	seen := map[string]bool{}
	out := make([]rbacv1.ClusterRoleBinding, 0, len(users))
	for _, u := range users {
		role := u.Role.ClusterRole()
		switch {
		case u.Email == "":
			return nil, fmt.Errorf("%w: empty email", ErrInvalidUser)
		case role == "":
			return nil, fmt.Errorf("%w: %s: role %q (want admin or view)", ErrInvalidUser, u.Email, u.Role)
		case seen[u.Email]:
			return nil, fmt.Errorf("%w: %s listed twice", ErrInvalidUser, u.Email)
		}
		seen[u.Email] = true
		out = append(out, rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: BindingName(c.Release(), u.Email), Labels: c.labels()},
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
	Action Action
	// Binding is the desired binding; for ActionDelete, the one to delete.
	Binding rbacv1.ClusterRoleBinding
}

// RBACPlan is the difference between the bindings users need and those a
// cluster has. It is a plain value: print it for a dry run, then Apply it.
type RBACPlan struct {
	Cluster Cluster
	Changes []RBACChange
	// Unchanged counts the bindings already as desired.
	Unchanged int
}

// PlanRBAC compares the bindings users need with existing, the bindings in
// the cluster that carry this cluster's labels, and returns the changes.
func PlanRBAC(c Cluster, users []User, existing []rbacv1.ClusterRoleBinding) (*RBACPlan, error) {
	desired, err := c.Bindings(users)
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

// ListRBAC returns the bindings in the cluster that carry c's labels.
func ListRBAC(ctx context.Context, cs kubernetes.Interface, c Cluster) ([]rbacv1.ClusterRoleBinding, error) {
	sel := labels.SelectorFromSet(c.labels()).String()
	list, err := cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list cluster role bindings: %w", err)
	}
	return list.Items, nil
}

// Apply carries out the plan against a cluster. Each step tolerates the
// state a previous, interrupted Apply may have left, so re-running a plan
// (or re-planning) is safe. It stops at the first error or when ctx ends.
func (p *RBACPlan) Apply(ctx context.Context, cs kubernetes.Interface) error {
	crbs := cs.RbacV1().ClusterRoleBindings()
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
				err = createOrUpdate(ctx, cs, b)
			}
		default:
			err = createOrUpdate(ctx, cs, b)
		}
		if err != nil {
			return fmt.Errorf("%s cluster role binding %s: %w", ch.Action, b.Name, err)
		}
	}
	return nil
}

// SyncRBAC lists the cluster's bindings, plans and applies: after it
// returns nil, exactly users have bindings. The plan is returned for
// display.
func SyncRBAC(ctx context.Context, cs kubernetes.Interface, c Cluster, users []User) (*RBACPlan, error) {
	existing, err := ListRBAC(ctx, cs, c)
	if err != nil {
		return nil, err
	}
	plan, err := PlanRBAC(c, users, existing)
	if err != nil {
		return nil, err
	}
	return plan, plan.Apply(ctx, cs)
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
