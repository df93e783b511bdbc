package etcdrelocate_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

// benchSizes returns the database sizes BenchmarkRelocate runs at, in MiB:
// TENANTKIT_BENCH_ETCD_MIB (a comma-separated list), default 256 and 1024.
func benchSizes(b *testing.B) []int {
	env := os.Getenv("TENANTKIT_BENCH_ETCD_MIB")
	if env == "" {
		return []int{256, 1024}
	}
	var sizes []int
	for f := range strings.SplitSeq(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		require.NoError(b, err, "TENANTKIT_BENCH_ETCD_MIB=%q", env)
		sizes = append(sizes, n)
	}
	return sizes
}

// BenchmarkRelocate measures a relocation of a member of a 3-member tenant
// etcd holding 256 MiB and 1 GiB of data (TENANTKIT_BENCH_ETCD_MIB=256
// selects one size), with a steady write load running, on the simulated
// nodes. The baseline sub-benchmark replays the documented shell procedure
// on another member of the same cluster in the same run; library runs the
// default plan (the snapshot streams while the member moves),
// library-snapshot-first takes the snapshot before the member stops, and
// library-no-snapshot takes none.
//
// make bench runs both sizes (about four minutes on two cores, most of it
// writing the gigabyte); TENANTKIT_BENCH_ETCD_MIB=256 keeps it to one.
//
// Metrics: total-s (the whole move), catchup-s (wait-pod and catch-up: from
// the new claim until the learner has caught up, the part that grows with
// the data), total/catchup (target ≤ 2 at 1 GiB), <step>-s for every step
// of the library's run (the breakdown), failed-writes and longest-gap-ms of
// the load, min-FT (lowest fault tolerance seen), FT0-s (time at fault
// tolerance 0 or below), unsynced-voters (voters counted without holding
// the data), and on library x-baseline-FT0 (its FT0-s over the baseline's).
func BenchmarkRelocate(b *testing.B) {
	for _, mib := range benchSizes(b) {
		b.Run(fmt.Sprintf("%dMiB", mib), func(b *testing.B) {
			te := startTenant(b, etcdlayout.Config{Tenant: fmt.Sprintf("bench%d", mib), Size: resource.MustParse(fmt.Sprintf("%dGi", 2+mib/256))})
			fill(b, te, mib)
			var baseline moveReport
			b.Run("baseline", func(b *testing.B) {
				for range b.N {
					rep, _ := te.replayDocumented(b, "documented", "etcd-0")
					baseline = rep
					reportMove(b, rep)
				}
			})
			var rows, breakdown []string
			for _, v := range []struct {
				name string
				opts etcdrelocate.Options
			}{
				{"library", etcdrelocate.Options{}},
				{"library-snapshot-first", etcdrelocate.Options{SnapshotFirst: true}},
				{"library-no-snapshot", etcdrelocate.Options{SkipSnapshot: true}},
			} {
				b.Run(v.name, func(b *testing.B) {
					for range b.N {
						s := te.waitHealthy(b, te.relocator(b, nil), "etcd-1")
						rep := te.relocateUnderLoadWith(b, v.name, "etcd-1", te.freeNode(b, s), v.opts)
						reportMove(b, rep)
						if baseline.monitor.AtZero > 0 {
							b.ReportMetric(rep.monitor.AtZero.Seconds()/baseline.monitor.AtZero.Seconds(), "x-baseline-FT0")
						}
						rows = append(rows, rep.row())
						breakdown = append(breakdown, v.name+": "+stepBreakdown(rep))
					}
				})
			}
			b.Logf("%d MiB:\n%s\n%s\n%s\nper step (s):\n%s", mib, reportHeader, baseline.row(), strings.Join(rows, "\n"), strings.Join(breakdown, "\n"))
		})
	}
}

func reportMove(b *testing.B, m moveReport) {
	b.ReportMetric(m.took.Seconds(), "total-s")
	if m.catchUp > 0 {
		b.ReportMetric(m.catchUp.Seconds(), "catchup-s")
		b.ReportMetric(m.took.Seconds()/m.catchUp.Seconds(), "total/catchup")
	}
	for _, st := range m.steps {
		b.ReportMetric(st.Duration.Seconds(), string(st.Kind)+"-s")
	}
	b.ReportMetric(float64(m.load.Failed), "failed-writes")
	b.ReportMetric(float64(m.load.LongestGap.Milliseconds()), "longest-gap-ms")
	b.ReportMetric(float64(m.monitor.MinFaultTolerance), "min-FT")
	b.ReportMetric(m.monitor.AtZero.Seconds(), "FT0-s")
	b.ReportMetric(float64(m.monitor.MaxUnsyncedVoters), "unsynced-voters")
	b.ReportMetric(0, "ns/op")
}

// stepBreakdown lists the steps' durations in order, on one line.
func stepBreakdown(m moveReport) string {
	parts := make([]string, 0, len(m.steps))
	for _, st := range m.steps {
		parts = append(parts, fmt.Sprintf("%s %.2f", st.Kind, st.Duration.Seconds()))
	}
	return strings.Join(parts, ", ")
}

// fill writes mib MiB of data (512 KiB values) through eight writers.
func fill(b *testing.B, te *tenantEnv, mib int) {
	b.Helper()
	fillClient(b, te.client(b), mib)
}

// fillClient writes mib MiB of data through cli.
func fillClient(b *testing.B, cli *clientv3.Client, mib int) {
	b.Helper()
	value := strings.Repeat("x", 512<<10)
	n := mib * 2
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	start := time.Now()
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				_, err := cli.Put(ctx, fmt.Sprintf("/fill/%06d", i), value)
				cancel()
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	require.NoError(b, <-errs)
	b.Logf("wrote %d MiB in %s", mib, time.Since(start).Round(time.Second))
}
