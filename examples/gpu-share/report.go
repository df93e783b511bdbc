package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/gpushare"
)

func printLedger(out io.Writer, l *gpushare.Ledger) {
	s := l.Summary()
	fmt.Fprintf(out, "\nLedger: %d GPU nodes, %d GPUs, %d pods; %s\n", s.Nodes, s.GPUs, s.Pods, s)
	var rows [][]string
	for _, n := range l.Nodes() {
		if n.Err != nil {
			rows = append(rows, []string{n.Name, "-", "registration unreadable", "", "", "", ""})
		}
		for _, g := range n.GPUs {
			state := ""
			switch {
			case !g.Health:
				state = " (unhealthy)"
			case g.Cordoned:
				state = " (cordoned)"
			case g.Overcommitted:
				state = " (overcommitted)"
			}
			rows = append(rows, []string{n.Name, g.ID + state, g.Type,
				of(g.Used.MemoryMiB, g.Capacity.MemoryMiB, "MiB"), of(g.Used.Cores, g.Capacity.Cores, ""),
				of(g.Used.Slots, g.Capacity.Slots, ""), holders(g.Pods)})
		}
	}
	cli.Table(out, []string{"NODE", "GPU", "TYPE", "MEMORY", "CORES", "SLOTS", "PODS"}, rows)

	rows = rows[:0]
	for _, ns := range l.Namespaces() {
		rows = append(rows, []string{ns.Namespace, fmt.Sprint(ns.Pods), fmt.Sprint(ns.GPUs),
			fmt.Sprintf("%d MiB", ns.Used.MemoryMiB), fmt.Sprint(ns.Used.Cores), fmt.Sprint(ns.Used.Slots)})
	}
	if len(rows) > 0 {
		fmt.Fprintln(out)
		cli.Table(out, []string{"NAMESPACE", "PODS", "GPUS", "MEMORY", "CORES", "SLOTS"}, rows)
	}
}

func of(used, total int64, unit string) string {
	if unit != "" {
		unit = " " + unit
	}
	return fmt.Sprintf("%d/%d%s", used, total, unit)
}

func holders(ps []gpushare.PodShare) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Namespace + "/" + p.Name
	}
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ", ")
}

func printProblems(out io.Writer, l *gpushare.Ledger) {
	probs := l.Problems()
	if len(probs) == 0 {
		return
	}
	keys := make([]string, 0, len(probs))
	for k := range probs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(out, "\n%d objects left out, wholly or in part (HAMi leaves them out too):\n", len(keys))
	for _, k := range keys {
		fmt.Fprintf(out, "  %s: %s [%s]\n", k, probs[k].Error(), probs[k].Reason)
	}
}

func printFitError(out io.Writer, fe *gpushare.FitError) {
	fmt.Fprintf(out, "Blocked: %s [%s]\n", fe.Blocker.Detail, fe.Blocker.Kind)
	var rows [][]string
	for _, n := range fe.Nodes {
		if len(n.GPUs) == 0 {
			rows = append(rows, []string{n.Node, "-", string(n.Reason), n.Detail})
		}
		for _, g := range n.GPUs {
			rows = append(rows, []string{n.Node, g.ID, string(g.Reason), g.Detail})
		}
	}
	cli.Table(out, []string{"NODE", "GPU", "REASON", "DETAIL"}, rows)
	fmt.Fprintf(out, "HAMi would report: %s\n", fe.Summary())
}

func printWhatIf(out io.Writer, l *gpushare.Ledger, shape gpushare.PodRequest) error {
	c := shape.Containers[0]
	mem := "the whole card"
	if c.MemoryMiB > 0 {
		mem = fmt.Sprintf("%d MiB", c.MemoryMiB)
	}
	fmt.Fprintf(out, "\nWhat if: how many more pods asking %d GPU(s) × (%s, %d%% cores) fit now?\n", c.Count, mem, c.Cores)
	w, err := l.WhatIf(shape, 0)
	if err != nil {
		return cli.WithCode(cli.ExitUsage, err)
	}
	var rows [][]string
	for _, n := range l.Nodes() {
		if len(n.GPUs) > 0 {
			rows = append(rows, []string{n.Name, fmt.Sprint(w.ByNode[n.Name])})
		}
	}
	cli.Table(out, []string{"NODE", "MORE PODS"}, rows)
	fmt.Fprintf(out, "%d more fit. Free memory now: %d MiB; left over after them: %d MiB (%.0f%%), which no pod of this shape can use.\n",
		w.Fits, w.FreeMiB, w.StrandedMiB, 100*w.Fragmentation)
	if w.Next != nil {
		fmt.Fprintf(out, "The next one would not fit: %s (%s)\n", w.Next.Blocker.Detail, w.Next.Summary())
	}
	return nil
}
