package cli

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLines_log: in a log, background lines and step lines arrive whole,
// a line written in pieces included, whatever the goroutines.
func TestLines_log(t *testing.T) {
	var b bytes.Buffer
	step := Step(&b, "starting")
	w := Lines(&b)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() { fmt.Fprintf(w, "tenantkit: building server-%d ...\n", i) })
	}
	wg.Wait()
	fmt.Fprint(w, "tenantkit: built ")
	fmt.Fprint(w, "everything\n")
	fmt.Fprint(w, "no end yet")
	step.Done(nil)
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	require.Len(t, lines, 23, b.String())
	require.Equal(t, "  … starting", lines[0])
	for _, l := range lines[1:21] {
		require.Regexp(t, `^tenantkit: building server-\d+ \.\.\.$`, l)
	}
	require.Equal(t, "tenantkit: built everything", lines[21])
	require.True(t, strings.HasPrefix(lines[22], "  ✓ starting ("), lines[22])
}

// TestLines_terminal: on a terminal a background line goes above the step
// line, which is drawn again below it.
func TestLines_terminal(t *testing.T) {
	var b bytes.Buffer
	c := &console{out: &b, tty: true}
	consoles.Store(&b, c)
	t.Cleanup(func() { consoles.Delete(&b) })
	step := Step(&b, "starting")
	fmt.Fprintln(Lines(&b), "tenantkit: built etcd v3.7.3 in 2s")
	step.Done(nil)
	out := b.String()
	require.True(t, strings.HasPrefix(out, "  … starting\r\033[Ktenantkit: built etcd v3.7.3 in 2s\n  … starting (0s)"), "%q", out)
	require.Contains(t, out, "\r\033[K  ✓ starting (")
	require.Nil(t, c.active)
	fmt.Fprintln(Lines(&b), "after")
	require.True(t, strings.HasSuffix(b.String(), ")\nafter\n"), "%q", b.String())
}
