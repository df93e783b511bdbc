package etcdrelocatetest

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// LoadConfig tunes StartLoad.
type LoadConfig struct {
	// Prefix is the key prefix. Default "/load/".
	Prefix string
	// Interval is the pause between writes. Default 20ms (about 50
	// writes a second while etcd keeps up).
	Interval time.Duration
	// Timeout bounds each write. Default 2s.
	Timeout time.Duration
	// ValueSize pads each value to this many bytes. Default 0 (the value
	// is the sequence number).
	ValueSize int
}

// Load is a steady write load on an etcd cluster: one writer that puts
// <prefix><seq> one after the other and records which writes etcd
// acknowledged.
type Load struct {
	cfg    LoadConfig
	cli    *clientv3.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	report LoadReport
	acked  []uint64
	last   time.Time
}

// LoadReport summarises a load run.
type LoadReport struct {
	// Acked and Failed count writes that etcd acknowledged and that
	// failed or timed out (a failed write may or may not have been
	// applied).
	Acked, Failed int
	// LongestGap is the longest time between two acknowledged writes:
	// the longest unavailability seen by the writer.
	LongestGap time.Duration
	// Duration is how long the load ran.
	Duration time.Duration
	// FirstError is the first write error, "" if none.
	FirstError string
}

// StartLoadT is StartLoad for tests: the load stops when the test ends at
// the latest.
func StartLoadT(t testing.TB, cli *clientv3.Client, cfg LoadConfig) *Load {
	t.Helper()
	l := StartLoad(cli, cfg)
	t.Cleanup(func() { l.Stop() })
	return l
}

// StartLoad starts writing through cli until Stop, which the caller calls.
// cli should reach every member, as a tenant kube-apiserver's client does.
func StartLoad(cli *clientv3.Client, cfg LoadConfig) *Load {
	if cfg.Prefix == "" {
		cfg.Prefix = "/load/"
	}
	if cfg.Interval == 0 {
		cfg.Interval = 20 * time.Millisecond
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &Load{cfg: cfg, cli: cli, cancel: cancel, done: make(chan struct{})}
	go l.run(ctx)
	return l
}

func (l *Load) run(ctx context.Context) {
	defer close(l.done)
	start := time.Now()
	l.last = start
	for seq := uint64(0); ctx.Err() == nil; seq++ {
		wctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
		_, err := l.cli.Put(wctx, l.key(seq), l.value(seq))
		cancel()
		now := time.Now()
		l.mu.Lock()
		switch {
		case err == nil:
			l.acked = append(l.acked, seq)
			l.report.Acked++
			l.report.LongestGap = max(l.report.LongestGap, now.Sub(l.last))
			l.last = now
		case ctx.Err() == nil:
			l.report.Failed++
			if l.report.FirstError == "" {
				l.report.FirstError = err.Error()
			}
		}
		l.report.Duration = now.Sub(start)
		l.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(l.cfg.Interval):
		}
	}
}

func (l *Load) key(seq uint64) string { return l.cfg.Prefix + fmt.Sprintf("%012d", seq) }

func (l *Load) value(seq uint64) string {
	v := strconv.FormatUint(seq, 10)
	for len(v) < l.cfg.ValueSize {
		v += "."
	}
	return v
}

// current returns the figures so far.
func (l *Load) current() LoadReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.report
}

// Stop stops the writer and returns the final report. It is safe to call
// more than once.
func (l *Load) Stop() LoadReport {
	l.cancel()
	<-l.done
	return l.current()
}

// CheckT is Check for tests: it fails the test on a lost write.
func (l *Load) CheckT(t testing.TB, ctx context.Context, cli *clientv3.Client) {
	t.Helper()
	if err := l.Check(ctx, cli); err != nil {
		t.Fatal(err)
	}
}

// Check checks, after Stop, that every acknowledged write is readable with
// its value through cli (a linearizable read), and returns an error naming
// the first lost write.
func (l *Load) Check(ctx context.Context, cli *clientv3.Client) error {
	l.mu.Lock()
	acked := append([]uint64(nil), l.acked...)
	l.mu.Unlock()
	resp, err := cli.Get(ctx, l.cfg.Prefix, clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("etcdrelocatetest: read back the load: %w", err)
	}
	got := make(map[string]string, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		got[string(kv.Key)] = string(kv.Value)
	}
	for _, seq := range acked {
		if v, ok := got[l.key(seq)]; !ok || v != l.value(seq) {
			return fmt.Errorf("etcdrelocatetest: acknowledged write %s lost (read %q, present %v)", l.key(seq), v, ok)
		}
	}
	return nil
}
