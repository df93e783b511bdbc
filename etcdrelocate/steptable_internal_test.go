package etcdrelocate

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// stepTableMarkdown renders stepTable as docs/etcdrelocate.md shows it.
func stepTableMarkdown() string {
	names := map[effect]string{effectNone: "—", effectRemoveVoter: "removes a voter", effectStopVoter: "stops a voter",
		effectRemoveStopped: "removes the stopped voter", effectAddLearner: "adds a learner", effectPromote: "promotes the learner",
		effectRemoveLearner: "removes the learner"}
	var b strings.Builder
	b.WriteString("| step | what it does | membership | a timeout rolls back |\n| --- | --- | --- | --- |\n")
	for _, s := range stepTable {
		d := s.Info()
		rb := ""
		if d.rollsBack {
			rb = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", d.kind, d.does, names[d.effect], rb)
	}
	return b.String()
}

// TestStepTable_documented: docs/etcdrelocate.md's table of steps is the
// declaration's (regenerate with TENANTKIT_UPDATE_DOCS=1).
func TestStepTable_documented(t *testing.T) {
	const path, begin, end = "../docs/etcdrelocate.md", "<!-- steps: begin (stepTable, steptable.go) -->\n", "<!-- steps: end -->"
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	require.True(t, i >= 0 && j > i, "the markers of the step table are missing in %s", path)
	want := stepTableMarkdown()
	if os.Getenv("TENANTKIT_UPDATE_DOCS") != "" {
		require.NoError(t, os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644))
		return
	}
	require.Equal(t, want, doc[i+len(begin):j], "docs/etcdrelocate.md's table of steps differs from stepTable: run TENANTKIT_UPDATE_DOCS=1 go test -run TestStepTable_documented ./etcdrelocate")
}

// TestStepTable_plans: every plan lists declared steps, each once, in the
// table's order.
func TestStepTable_plans(t *testing.T) {
	index := map[StepKind]int{}
	for i, s := range stepTable {
		d := s.Info()
		require.NotContains(t, index, d.kind, "declared twice")
		index[d.kind] = i
		require.NotNil(t, s, d.kind)
		require.NotEmpty(t, d.does, d.kind)
	}
	for _, p := range []*Plan{
		{Layout: LayoutStatefulSet, Voters: 3, TargetNode: "n4", Member: MemberRef{ID: 1, Node: "n1", Leader: true, PV: "pv"}},
		{Layout: LayoutStatefulSet, Voters: 3, TargetNode: "n4", Member: MemberRef{ID: 1, Node: "n1"}, Options: Options{SkipSnapshot: true, SnapshotFirst: true}},
		{Layout: LayoutEtcdMember, Voters: 3, TargetNode: "n4", Member: MemberRef{ID: 1, Node: "n1", EtcdMember: "m"}},
		{Layout: LayoutMigrated, Voters: 5, TargetNode: "n4", Member: MemberRef{ID: 1}, Options: Options{SkipCordon: true}},
	} {
		p.build()
		last := -1
		for _, s := range p.Steps {
			i, ok := index[s.Kind]
			require.True(t, ok, "%s: undeclared step %s", p.Layout, s.Kind)
			require.Greater(t, i, last, "%s: %s out of the table's order", p.Layout, s.Kind)
			last = i
		}
	}
}
