package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Table prints rows under a header as aligned columns.
func Table(out io.Writer, header []string, rows [][]string) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}
