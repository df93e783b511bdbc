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

// withTarget completes a command line the library printed ("etcd-relocate
// --namespace ...", or one with the placeholder --kubeconfig KUBECONFIG)
// with the flags that reach the same cluster: --kubeconfig, --context and
// --direct, so that pasting it works. Other text is returned as it is.
func withTarget(cmd string, t *cli.Target, direct bool) string {
	const prog = "etcd-relocate "
	i := strings.Index(cmd, prog)
	if i < 0 || t.Embedded() {
		return cmd
	}
	cmd = strings.Replace(cmd, " --kubeconfig KUBECONFIG", "", 1)
	flags := "--kubeconfig " + shellQuote(t.Kubeconfig)
	if t.Context != "" {
		flags += " --context " + shellQuote(t.Context)
	}
	if direct {
		flags += " --direct"
	}
	return cmd[:i+len(prog)] + flags + " " + cmd[i+len(prog):]
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_./:=@,+.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
