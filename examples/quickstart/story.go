package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cozystack/tenantkit/cli"
)

// step is one capability of the story: a short function calling the
// library, which returns a one-line result.
type step struct {
	capability string
	title      string
	run        func(ctx context.Context) (string, error)
	// required steps build what later ones use: if one fails, the rest
	// are skipped.
	required bool
}

// errSkipped marks a step that had nothing to check (an addon that is
// off); its message is the reason.
var errSkipped = errors.New("skipped")

func skip(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errSkipped, fmt.Sprintf(format, args...))
}

// outcome is how one step went.
type outcome struct {
	capability string
	result     string
	took       time.Duration
	failed     bool
}

// play runs the steps in order, each under its heading, prints the summary
// table, and returns an ExitFailure error if any step failed.
func play(ctx context.Context, out io.Writer, steps []step) ([]outcome, error) {
	var outcomes []outcome
	var blocked string
	for i, s := range steps {
		fmt.Fprintf(out, "\n== %d. %s: %s\n\n", i+1, s.capability, s.title)
		o := outcome{capability: s.capability}
		switch {
		case blocked != "":
			o.result = "skipped: needs " + blocked
		case ctx.Err() != nil:
			o.result, o.failed = "not run: "+ctx.Err().Error(), true
		default:
			begin := time.Now()
			res, err := s.run(ctx)
			o.took = time.Since(begin)
			switch {
			case errors.Is(err, errSkipped):
				o.result = err.Error()
			case err != nil:
				o.result, o.failed = "FAILED: "+oneLine(err.Error()), true
				if s.required {
					blocked = s.capability
				}
			default:
				o.result = "ok: " + res
			}
		}
		fmt.Fprintf(out, "\n%s\n", o.result)
		outcomes = append(outcomes, o)
	}
	printSummary(out, outcomes)
	failed := 0
	for _, o := range outcomes {
		if o.failed {
			failed++
		}
	}
	if failed > 0 {
		return outcomes, cli.WithCode(cli.ExitFailure, fmt.Errorf("%d of %d capabilities failed", failed, len(outcomes)))
	}
	return outcomes, nil
}

func printSummary(out io.Writer, outcomes []outcome) {
	var rows [][]string
	var total time.Duration
	for _, o := range outcomes {
		took := "-"
		if o.took > 0 {
			took = round(o.took).String()
			total += o.took
		}
		rows = append(rows, []string{o.capability, o.result, took})
	}
	fmt.Fprintln(out, "\n== Summary")
	fmt.Fprintln(out)
	cli.Table(out, []string{"CAPABILITY", "RESULT", "TIME"}, rows)
	fmt.Fprintf(out, "\n%d capabilities in %s\n", len(outcomes), round(total))
}

// round keeps milliseconds under a second and tenths above.
func round(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// oneLine keeps a table cell on one line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}
