package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"reflect"
	"sync"
	"time"

	"golang.org/x/term"
)

// Progress is a progress line started by Step.
type Progress struct {
	con   *console
	what  string
	start time.Time
	done  chan struct{}
	wg    sync.WaitGroup
}

// console serializes what goes to one writer: the step line a terminal
// shows (redrawn in place) and whole lines written through Lines.
type console struct {
	out    io.Writer
	tty    bool
	mu     sync.Mutex
	active *Progress // the step line on screen, terminals only
}

var consoles sync.Map // io.Writer → *console

// consoleFor returns the console of out, one per writer.
func consoleFor(out io.Writer) *console {
	if out == nil || !reflect.TypeOf(out).Comparable() {
		return &console{out: out, tty: isTerminal(out)}
	}
	c, _ := consoles.LoadOrStore(out, &console{out: out, tty: isTerminal(out)})
	return c.(*console)
}

// Step prints "what ..." and, while the work runs, keeps the line alive:
// on a terminal it updates the elapsed time in place every second; in a log
// it adds a "still ..." line every 10 seconds after the first 2. Call Done
// when the work ends. Lines written meanwhile through Lines(out) appear
// above the step line.
func Step(out io.Writer, what string) *Progress {
	p := &Progress{con: consoleFor(out), what: what, start: time.Now(), done: make(chan struct{})}
	c := p.con
	c.mu.Lock()
	if c.tty {
		c.active = p
		fmt.Fprintf(out, "  … %s", what)
	} else {
		fmt.Fprintf(out, "  … %s\n", what)
	}
	c.mu.Unlock()
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
			c := p.con
			c.mu.Lock()
			switch {
			case c.tty:
				fmt.Fprintf(c.out, "\r  … %s (%s)", p.what, el)
			case el >= 2*time.Second && el%(10*time.Second) == 2*time.Second:
				fmt.Fprintf(c.out, "    still %s (%s)\n", p.what, el)
			}
			c.mu.Unlock()
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
	c := p.con
	c.mu.Lock()
	defer c.mu.Unlock()
	prefix := ""
	if c.tty {
		prefix = "\r\033[K"
		if c.active == p {
			c.active = nil
		}
	}
	fmt.Fprintf(c.out, "%s  %s %s (%s)\n", prefix, mark, p.what, roundDuration(el))
}

// Lines returns a writer for whole lines of background work (a server
// build, say) printed to out while steps run: on a terminal each line is
// printed above the current step line, which is then drawn again; in a log
// lines are never cut into by a step's. A partial line waits for its end.
func Lines(out io.Writer) io.Writer { return &lineWriter{con: consoleFor(out)} }

type lineWriter struct {
	con *console
	mu  sync.Mutex
	buf []byte
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		w.con.line(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
}

// line prints one line, keeping a terminal's step line below it.
func (c *console) line(l []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tty && c.active != nil {
		p := c.active
		fmt.Fprintf(c.out, "\r\033[K%s\n  … %s (%s)", l, p.what, time.Since(p.start).Round(time.Second))
		return
	}
	fmt.Fprintf(c.out, "%s\n", l)
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
