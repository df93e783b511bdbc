package examplecli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// Progress is a progress line started by Step.
type Progress struct {
	out   io.Writer
	what  string
	start time.Time
	tty   bool
	done  chan struct{}
	wg    sync.WaitGroup
}

// Step prints "what ..." and, while the work runs, keeps the line alive:
// on a terminal it updates the elapsed time in place every second; in a log
// it adds a "still ..." line every 10 seconds after the first 2. Call Done
// when the work ends.
func Step(out io.Writer, what string) *Progress {
	p := &Progress{out: out, what: what, start: time.Now(), tty: isTerminal(out), done: make(chan struct{})}
	if p.tty {
		fmt.Fprintf(out, "  … %s", what)
	} else {
		fmt.Fprintf(out, "  … %s\n", what)
	}
	p.wg.Add(1)
	go p.tick()
	return p
}

func (p *Progress) tick() {
	defer p.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
			el := time.Since(p.start).Round(time.Second)
			switch {
			case p.tty:
				fmt.Fprintf(p.out, "\r  … %s (%s)", p.what, el)
			case el >= 2*time.Second && el%(10*time.Second) == 2*time.Second:
				fmt.Fprintf(p.out, "    still %s (%s)\n", p.what, el)
			}
		}
	}
}

// Done ends the line with ✓ or ✗ and the elapsed time.
func (p *Progress) Done(err error) {
	close(p.done)
	p.wg.Wait()
	mark := "✓"
	if err != nil {
		mark = "✗"
	}
	el := time.Since(p.start)
	prefix := ""
	if p.tty {
		prefix = "\r\033[K"
	}
	fmt.Fprintf(p.out, "%s  %s %s (%s)\n", prefix, mark, p.what, roundDuration(el))
}

func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
