package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/etcdrelocate"
)

// printMembers prints the observed members as a table.
func printMembers(out io.Writer, s *etcdrelocate.State) {
	fmt.Fprintf(out, "Tenant etcd %s/%s (%s):\n", s.Namespace, s.Cluster, s.Layout)
	leader := s.Leader()
	var rows [][]string
	for _, m := range s.Members {
		role := "voter"
		if m.IsLearner {
			role = "learner"
		}
		if m.ID == leader {
			role += ", leader"
		}
		health, db := "down", "-"
		if m.Status != nil {
			health = "healthy"
			if len(m.Status.Errors) > 0 {
				health = strings.Join(m.Status.Errors, "; ")
			}
			db = fmt.Sprintf("%.1f MiB", float64(m.Status.DBSize)/(1<<20))
		}
		node := m.Node()
		if node == "" {
			node = "-"
		}
		rows = append(rows, []string{m.Label(), etcdrelocate.FormatID(m.ID), node, role, health, db})
	}
	cli.Table(out, []string{"MEMBER", "ID", "NODE", "ROLE", "STATUS", "DB"}, rows)
}

// progress turns executor events into progress lines.
type progress struct {
	out  io.Writer
	step *cli.Progress
}

func newProgress(out io.Writer) *progress { return &progress{out: out} }

func (p *progress) event(e etcdrelocate.Event) {
	switch e.Phase {
	case etcdrelocate.EventStarted:
		p.step = cli.Step(p.out, fmt.Sprintf("%2d/%d %s", e.Index+1, e.Total, e.Step))
	default:
		if p.step == nil {
			return
		}
		p.step.Done(e.Err)
		p.step = nil
		if e.Message != "" {
			fmt.Fprintf(p.out, "        %s\n", e.Message)
		}
	}
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return "  " + strings.Join(lines, "\n  ") + "\n"
}
