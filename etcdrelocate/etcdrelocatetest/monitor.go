package etcdrelocatetest

import (
	"context"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/cozystack/tenantkit/etcdrelocate"
)

// MonitorConfig tunes StartMonitor.
type MonitorConfig struct {
	// Interval is the sampling period. Default 200ms.
	Interval time.Duration
	// SyncSlack is how far (in raft entries) a voter's applied index may
	// trail the highest committed index and still count as in sync; a tenth
	// of that index if larger. Default 200 (a CPU-starved follower trails
	// by dozens of entries; a new empty member by the whole log).
	SyncSlack uint64
}

// Monitor samples an etcd cluster's fault tolerance while something
// changes it: how many more voters could fail before quorum is lost,
// counting as healthy only voters that answer Status and are in sync with
// the highest committed index (an election in progress is not a loss).
type Monitor struct {
	cfg    MonitorConfig
	cli    *clientv3.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	report MonitorReport
}

// MonitorReport summarises what a Monitor saw.
type MonitorReport struct {
	// Samples is the number of samples taken.
	Samples int
	// MinFaultTolerance is the lowest fault tolerance seen; negative
	// means quorum was lost.
	MinFaultTolerance int
	// AtZero is the time spent at fault tolerance 0 or below, AtLoss the
	// time below 0 (no quorum). A loss counts once two samples in a row
	// show it, so that one slow sample on a starved machine is not taken
	// for one.
	AtZero, AtLoss time.Duration
	// MaxUnsyncedVoters is the most voters seen at once that were not
	// started or not in sync with the leader: members that count towards
	// quorum without holding the data.
	MaxUnsyncedVoters int
	// MaxVoters and MaxLearners are the largest membership seen.
	MaxVoters, MaxLearners int
}

// StartMonitor samples through cli until Stop, which the caller calls.
// cli's endpoints should cover the members; Status is asked of every member
// on its own client URL through cli's dial options.
func StartMonitor(cli *clientv3.Client, cfg MonitorConfig) *Monitor {
	if cfg.Interval == 0 {
		cfg.Interval = 200 * time.Millisecond
	}
	if cfg.SyncSlack == 0 {
		cfg.SyncSlack = 200
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Monitor{cfg: cfg, cli: cli, cancel: cancel, done: make(chan struct{}), report: MonitorReport{MinFaultTolerance: 1 << 30}}
	go m.run(ctx)
	return m
}

// StartMonitorT is StartMonitor for tests: the monitor stops when the test
// ends at the latest.
func StartMonitorT(t testing.TB, cli *clientv3.Client, cfg MonitorConfig) *Monitor {
	t.Helper()
	m := StartMonitor(cli, cfg)
	t.Cleanup(func() { m.Stop() })
	return m
}

func (m *Monitor) run(ctx context.Context) {
	defer close(m.done)
	last := time.Now()
	// streak counts loss samples in a row; run is their time.
	streak, run := 0, time.Duration(0)
	for ctx.Err() == nil {
		ft, unsynced, voters, learners, ok := m.sample(ctx)
		now := time.Now()
		m.mu.Lock()
		if ok {
			r := &m.report
			r.Samples++
			r.MinFaultTolerance = min(r.MinFaultTolerance, ft)
			if ft <= 0 {
				r.AtZero += now.Sub(last)
			}
			if ft < 0 {
				streak++
				run += now.Sub(last)
				switch {
				case streak == 2:
					r.AtLoss += run
				case streak > 2:
					r.AtLoss += now.Sub(last)
				}
			} else {
				streak, run = 0, 0
			}
			r.MaxUnsyncedVoters = max(r.MaxUnsyncedVoters, unsynced)
			r.MaxVoters, r.MaxLearners = max(r.MaxVoters, voters), max(r.MaxLearners, learners)
		}
		m.mu.Unlock()
		last = now
		select {
		case <-ctx.Done():
		case <-time.After(m.cfg.Interval):
		}
	}
}

// sample returns the fault tolerance, unsynced voters, voters and learners.
func (m *Monitor) sample(ctx context.Context) (ft, unsynced, voters, learners int, ok bool) {
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	ml, err := m.cli.MemberList(cctx, clientv3.WithSerializable())
	cancel()
	if err != nil {
		return 0, 0, 0, 0, false
	}
	type st struct {
		applied, committed uint64
		up                 bool
	}
	sts := map[uint64]st{}
	var lead uint64
	for _, mem := range ml.Members {
		if len(mem.ClientURLs) == 0 {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		r, err := m.cli.Status(cctx, mem.ClientURLs[0])
		cancel()
		// A member that answers counts as up even if it reports "no
		// leader": an election is a pause, not a loss of quorum.
		if err != nil {
			continue
		}
		sts[mem.ID] = st{applied: r.RaftAppliedIndex, committed: r.RaftIndex, up: true}
		lead = max(lead, r.RaftIndex)
	}
	slack := max(m.cfg.SyncSlack, lead/10)
	healthy := 0
	for _, mem := range ml.Members {
		if mem.IsLearner {
			learners++
			continue
		}
		voters++
		s := sts[mem.ID]
		if s.up && s.applied+slack >= lead {
			healthy++
		} else if mem.Name == "" || s.up {
			unsynced++
		}
	}
	return etcdrelocate.FaultTolerance(voters, healthy), unsynced, voters, learners, true
}

// Report returns the figures so far.
func (m *Monitor) Report() MonitorReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.report
}

// Stop stops sampling and returns the final report. It is safe to call more
// than once.
func (m *Monitor) Stop() MonitorReport {
	m.cancel()
	<-m.done
	return m.Report()
}
