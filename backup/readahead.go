package backup

import (
	"io"
	"sync"
)

// readAhead reads r in a goroutine, up to depth chunks ahead of the
// reader, so that downloading (and TLS) overlaps inflating and checking.
// Its memory is fixed: depth+1 chunks.
type readAhead struct {
	ch   chan chunk
	free chan []byte
	done chan struct{}
	wg   sync.WaitGroup
	cur  []byte // unread part of the chunk in hand
	last []byte // the chunk in hand, to give back
	err  error
}

type chunk struct {
	b   []byte
	err error
}

func newReadAhead(r io.Reader, size, depth int) *readAhead {
	ra := &readAhead{ch: make(chan chunk, depth), free: make(chan []byte, depth+1), done: make(chan struct{})}
	for i := 0; i <= depth; i++ {
		ra.free <- make([]byte, size)
	}
	ra.wg.Add(1)
	go ra.fill(r)
	return ra
}

func (ra *readAhead) fill(r io.Reader) {
	defer ra.wg.Done()
	for {
		var buf []byte
		select {
		case buf = <-ra.free:
		case <-ra.done:
			return
		}
		n := 0
		var err error
		for n < len(buf) && err == nil {
			var m int
			m, err = r.Read(buf[n:])
			n += m
		}
		select {
		case ra.ch <- chunk{buf[:n], err}:
		case <-ra.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read returns the bytes read ahead, then the error that ended them.
func (ra *readAhead) Read(p []byte) (int, error) {
	for len(ra.cur) == 0 {
		if ra.err != nil {
			return 0, ra.err
		}
		if ra.last != nil {
			ra.free <- ra.last[:cap(ra.last)]
			ra.last = nil
		}
		c := <-ra.ch
		ra.cur, ra.last, ra.err = c.b, c.b, c.err
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	return n, nil
}

// stop ends the goroutine and waits for it (for its read in progress, if
// any, to return). The reader is not used after.
func (ra *readAhead) stop() {
	close(ra.done)
	ra.wg.Wait()
}
