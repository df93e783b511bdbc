package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/cli"
)

// previewFlags are preview's restore spec and output flags.
type previewFlags struct {
	namespaces, excluded, mapping []string
	policy, selector              string
	jsonOut                       bool
}

func previewCmd(o *options) *cobra.Command {
	var f previewFlags
	cmd := &cobra.Command{
		Use:   "preview BACKUP",
		Short: "Show what a restore of BACKUP would do to the cluster, item by item (changes nothing)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := namespaceMapping(f.mapping)
			if err != nil {
				return err
			}
			if err := errors.Join(checkNames("BACKUP", args[0]), checkNamespaces("--include-namespace", f.namespaces),
				checkNamespaces("--exclude-namespace", f.excluded),
				cli.CheckOneOf("--existing-resource-policy", f.policy, "", string(velerov1.PolicyTypeNone), string(velerov1.PolicyTypeUpdate)),
				o.checkBucketFlags()); err != nil {
				return err
			}
			spec := velerov1.RestoreSpec{IncludedNamespaces: f.namespaces, ExcludedNamespaces: f.excluded,
				NamespaceMapping: m, ExistingResourcePolicy: velerov1.PolicyType(f.policy)}
			if f.selector != "" {
				if spec.LabelSelector, err = metav1.ParseToLabelSelector(f.selector); err != nil {
					return cli.Usage("--selector: %v", err)
				}
			}
			ctx, cancel, _, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer cancel()
			s, _, err := o.store(ctx)
			if err != nil {
				return err
			}
			return preview(ctx, o, s, args[0], spec, f.jsonOut)
		},
	}
	fs := cmd.Flags()
	fs.StringSliceVar(&f.namespaces, "include-namespace", nil, "namespaces to restore (repeatable; default all)")
	fs.StringSliceVar(&f.excluded, "exclude-namespace", nil, "namespaces to leave out (repeatable)")
	fs.StringSliceVar(&f.mapping, "namespace-mapping", nil, "restore namespace from into to (from:to, repeatable)")
	fs.StringVar(&f.policy, "existing-resource-policy", "", "none (default) or update")
	fs.StringVar(&f.selector, "selector", "", "restore only items with these labels (kubectl's selector syntax)")
	fs.BoolVar(&f.jsonOut, "json", false, "print the plan as JSON")
	o.bucketFlags(fs)
	o.sourceFlags(fs)
	return cmd
}

// preview plans the restore and prints the plan.
func preview(ctx context.Context, o *options, s *backup.Store, name string, spec velerov1.RestoreSpec, jsonOut bool) error {
	target, err := backup.NewRestoreTarget(o.target.RESTConfig)
	if err != nil {
		return cli.WithCode(cli.ExitUnavailable, err)
	}
	step := cli.Step(o.progress, "planning a restore of "+name)
	plan, err := s.PlanRestore(ctx, name, target, backup.PlanOptions{Spec: spec})
	step.Done(err)
	if err != nil {
		return planError(err)
	}
	if jsonOut {
		enc := json.NewEncoder(o.out)
		enc.SetIndent("", "  ")
		return enc.Encode(plan)
	}
	fmt.Fprint(o.out, plan)
	return nil
}

// planError gives plan and check errors their exit codes: a backup that
// does not verify, a bad spec or a missing backup fail (1); a cluster or
// bucket that cannot be read is unavailable (3).
func planError(err error) error {
	switch {
	case errors.Is(err, backup.ErrCorrupt), errors.Is(err, backup.ErrNotFound),
		errors.Is(err, backup.ErrInvalidRestoreSpec), errors.Is(err, backup.ErrInvalidConfig):
		return cli.WithCode(cli.ExitFailure, err)
	default:
		return cli.WithCode(cli.ExitUnavailable, err)
	}
}

func checkCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check RESTORE",
		Short: "Check a finished restore: items missing or different in the cluster, and Velero's own results",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := errors.Join(checkNames("RESTORE", args[0]), o.checkBucketFlags()); err != nil {
				return err
			}
			ctx, cancel, c, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer cancel()
			r, err := c.Restore(ctx, args[0])
			if err != nil {
				return o.notFound(ctx, c, err, "restore", args[0])
			}
			s, _, err := o.store(ctx)
			if err != nil {
				return err
			}
			return check(ctx, o, s, r, nil)
		},
	}
	o.bucketFlags(cmd.Flags())
	o.sourceFlags(cmd.Flags())
	return cmd
}

// check runs CheckRestore on restore r and prints what it found; exit 1
// when anything is missing or different.
func check(ctx context.Context, o *options, s *backup.Store, r *velerov1.Restore, plan *backup.RestorePlan) error {
	target, err := backup.NewRestoreTarget(o.target.RESTConfig)
	if err != nil {
		return cli.WithCode(cli.ExitUnavailable, err)
	}
	step := cli.Step(o.progress, "checking restore "+r.Name)
	res, err := s.CheckRestore(ctx, r.Name, target, backup.CheckOptions{Backup: r.Spec.BackupName, Spec: r.Spec, Plan: plan})
	step.Done(err)
	if err != nil {
		return planError(err)
	}
	var rows [][]string
	for _, it := range res.Missing {
		rows = append(rows, []string{"MISSING", it.ID(), orNone(it.Velero), it.Problem})
	}
	for _, it := range res.Different {
		rows = append(rows, []string{"DIFFERENT", it.ID(), orNone(it.Velero), fmt.Sprint(it.Diff)})
	}
	for _, it := range res.Replaced {
		rows = append(rows, []string{"REPLACED", it.ID(), orNone(it.Velero), it.Problem})
	}
	for _, d := range res.Disagreements {
		rows = append(rows, []string{"DISAGREES", d.ID, orNone(d.Velero), "planned " + orNone(d.Planned)})
	}
	for _, m := range res.Results.Warnings.Messages() {
		rows = append(rows, []string{"velero warning", "", "", m})
	}
	for _, m := range res.Results.Errors.Messages() {
		rows = append(rows, []string{"velero error", "", "", m})
	}
	cli.Table(o.out, []string{"CHECK", "ITEM", "VELERO", "DETAIL"}, rows)
	if !res.OK() {
		return cli.WithCode(cli.ExitFailure, fmt.Errorf("restore %s: %d missing, %d different, %d disagreements with the plan",
			r.Name, len(res.Missing), len(res.Different), len(res.Disagreements)))
	}
	fmt.Fprintf(o.out, "restore %s: %d items checked, nothing missing or different (%d items in Velero's list)\n", r.Name, res.Items, len(res.Velero))
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
