package etcdrelocate

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func settled() *OperatorState {
	return &OperatorState{Available: "True/QuorumHealthy", Degraded: "False/QuorumHealthy", Progressing: "False/Reconciled",
		ObservedMatchesSpec: true, ObservedReplicas: 3, ReadyMembers: 3}
}

func TestCheckOperatorState(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name   string
		change func(*OperatorState)
		want   OperatorStateReason
	}{
		{"settled", func(*OperatorState) {}, ""},
		{"deadline exceeded", func(s *OperatorState) {
			s.Available, s.Progressing = "False/DeadlineExceeded", "False/DeadlineExceeded"
		}, OperatorNotAvailable},
		{"quorum available", func(s *OperatorState) { s.Available = "True/QuorumAvailable" }, OperatorNotAvailable},
		{"no conditions", func(s *OperatorState) { s.Available = "" }, OperatorNotAvailable},
		{"degraded", func(s *OperatorState) { s.Degraded = "True/MembersUnhealthy" }, OperatorDegraded},
		{"spec changed", func(s *OperatorState) { s.Progressing = "True/SpecChanged" }, OperatorProgressing},
		{"not adopted", func(s *OperatorState) { s.ObservedMatchesSpec = false }, OperatorSpecNotAdopted},
		{"deadline pending", func(s *OperatorState) { s.ProgressDeadline = now.Add(time.Minute) }, OperatorDeadline},
		{"below target", func(s *OperatorState) { s.ReadyMembers = 2 }, OperatorMembersUnready},
		{"member deleting", func(s *OperatorState) { s.Deleting = []string{"etcd-x"} }, OperatorDeleting},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := settled()
			tc.change(st)
			err := checkOperatorState("etcd", st, now)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			var oe *OperatorStateError
			require.ErrorAs(t, err, &oe)
			require.Equal(t, tc.want, oe.Reason)
			require.NotEmpty(t, oe.Condition)
			require.NotEmpty(t, oe.Doing)
			require.ErrorIs(t, err, ErrRolloutInProgress)
		})
	}
}

func TestOperatorStateOf(t *testing.T) {
	aff := map[string]any{"nodeAffinity": map[string]any{"x": "y"}}
	ec := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"replicas": int64(3), "version": "3.6.11", "affinity": aff},
		"status": map[string]any{
			"readyMembers": int64(3), "progressDeadline": "2026-01-02T03:04:05Z",
			"observed": map[string]any{"replicas": int64(3), "version": "3.6.11", "affinity": map[string]any{}},
			"conditions": []any{
				map[string]any{"type": "Available", "status": "True", "reason": "QuorumHealthy"},
				map[string]any{"type": "Progressing", "status": "True", "reason": "SpecChanged"},
			},
		},
	}}
	m := unstructured.Unstructured{Object: map[string]any{}}
	m.SetName("etcd-abc")
	ts := metav1.Now()
	m.SetDeletionTimestamp(&ts)
	st := operatorStateOf(ec, []unstructured.Unstructured{m, {Object: map[string]any{}}})
	require.Equal(t, "True/QuorumHealthy", st.Available)
	require.Equal(t, "True/SpecChanged", st.Progressing)
	require.Empty(t, st.Degraded)
	require.False(t, st.ObservedMatchesSpec, "the pin is not in status.observed")
	require.Equal(t, 3, st.ObservedReplicas)
	require.Equal(t, []string{"etcd-abc"}, st.Deleting)
	require.Equal(t, 2026, st.ProgressDeadline.Year())
	require.NoError(t, unstructured.SetNestedMap(ec.Object, aff, "status", "observed", "affinity"))
	require.True(t, operatorStateOf(ec, nil).ObservedMatchesSpec)
	require.True(t, errors.Is(checkOperatorState("etcd", st, time.Now()), ErrRolloutInProgress))
}
