package etcdrelocatetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
	// Starved counts samples in which voters did not answer Status in
	// time but the others agreed on a leader, which proves quorum
	// (counted at fault tolerance 0, the least that proves); Unknown
	// samples in which nothing answered in time (not counted). Both mean
	// a starved machine, not a loss of quorum.
	Starved, Unknown int
}

// sampleKind is how a sample counts.
type sampleKind int

const (
	sampleCounted sampleKind = iota
	sampleStarved
	sampleUnknown
)

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
		ft, unsynced, voters, learners, kind := m.sample(ctx)
		now := time.Now()
		m.mu.Lock()
		switch kind {
		case sampleUnknown:
			m.report.Unknown++
		case sampleStarved:
			m.report.Starved++
		}
		if kind != sampleUnknown {
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

// sampleTimeout bounds each Status of a sample.
const sampleTimeout = time.Second

// voterState is what a sample learnt of one voter.
type voterState int

const (
	voterSilent  voterState = iota // did not answer in time: unknown
	voterDown                      // refused or failed: it answered no
	voterLagging                   // answered, not in sync
	voterHealthy                   // answered and in sync
)

// sample returns the fault tolerance, unsynced voters, voters and learners,
// and how the sample counts. A member that does not answer Status in time
// on a starved machine is unknown, not down: when such members are all
// that stands between the sample and a quorum loss, the voters that
// answered settle it. If they agree on a leader (with etcd's check-quorum a
// leader steps down within an election timeout of losing quorum), quorum
// is there: fault tolerance at least 0, a starved sample. If one reports no
// leader, quorum is lost. If none answered, the sample is unknown.
func (m *Monitor) sample(ctx context.Context) (ft, unsynced, voters, learners int, kind sampleKind) {
	cctx, cancel := context.WithTimeout(ctx, sampleTimeout)
	ml, err := m.cli.MemberList(cctx, clientv3.WithSerializable())
	cancel()
	if err != nil {
		return 0, 0, 0, 0, sampleUnknown
	}
	states, lead := m.statuses(ctx, ml.Members)
	slack := max(m.cfg.SyncSlack, lead.committed/10)
	healthy, silent := 0, 0
	for _, mem := range ml.Members {
		if mem.IsLearner {
			learners++
			continue
		}
		voters++
		s := states[mem.ID]
		switch {
		case s.state == voterHealthy && s.applied+slack >= lead.committed:
			healthy++
		case s.state == voterSilent:
			silent++
			if mem.Name == "" {
				unsynced++
			}
		case mem.Name == "" || s.state != voterDown:
			unsynced++
		}
	}
	ft = etcdrelocate.FaultTolerance(voters, healthy)
	if ft >= 0 || silent == 0 || etcdrelocate.FaultTolerance(voters, healthy+silent) < 0 {
		return ft, unsynced, voters, learners, sampleCounted
	}
	// Members that answered settle it: a leader (with etcd's check-quorum
	// it steps down within an election timeout of losing quorum) that
	// the others agree on proves quorum; one that reports no leader is
	// the cluster saying it has none.
	var leader uint64
	for _, mem := range ml.Members {
		s, ok := states[mem.ID]
		if mem.IsLearner || !ok || s.state != voterHealthy {
			continue
		}
		if s.leader == 0 || (leader != 0 && s.leader != leader) {
			return ft, unsynced, voters, learners, sampleCounted
		}
		leader = s.leader
	}
	if leader == 0 {
		return 0, 0, 0, 0, sampleUnknown
	}
	return 0, unsynced, voters, learners, sampleStarved
}

type memberSample struct {
	state                      voterState
	applied, committed, leader uint64
}

// statuses asks every member for its Status in parallel; it returns each
// one's state and the highest committed index seen.
func (m *Monitor) statuses(ctx context.Context, members []*pb.Member) (map[uint64]memberSample, memberSample) {
	out := map[uint64]memberSample{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, mem := range members {
		if len(mem.ClientURLs) == 0 {
			continue
		}
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, sampleTimeout)
			r, err := m.cli.Status(cctx, mem.ClientURLs[0])
			cancel()
			s := memberSample{state: voterDown}
			switch {
			case err == nil:
				// A member that answers counts as up even if it reports
				// "no leader": an election is a pause, not a loss.
				s = memberSample{state: voterHealthy, applied: r.RaftAppliedIndex, committed: r.RaftIndex, leader: r.Leader}
			case noAnswer(err):
				s.state = voterSilent
			}
			mu.Lock()
			out[mem.ID] = s
			mu.Unlock()
		})
	}
	wg.Wait()
	var lead memberSample
	for _, s := range out {
		lead.committed = max(lead.committed, s.committed)
	}
	return out, lead
}

// noAnswer reports an error that means no reply came in time (the client
// gave up), as opposed to a reply that is an error.
func noAnswer(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	// etcd's own errors ("no leader", "request timed out") come back as
	// rpctypes.EtcdError, whose gRPC code is not DeadlineExceeded.
	return status.Code(err) == codes.DeadlineExceeded
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
