package backup_test

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/backup/backuptest"
	"github.com/cozystack/tenantkit/localenv"
)

// benchArchiveMiB is the compressed size the verify benchmark aims at.
// TENANTKIT_BENCH_ARCHIVE_MIB=1024 gives the 1 GiB figure; the default
// keeps routine `make bench` runs short.
func benchArchiveMiB() int {
	if v, err := strconv.Atoi(os.Getenv("TENANTKIT_BENCH_ARCHIVE_MIB")); err == nil && v > 0 {
		return v
	}
	return 64
}

// BenchmarkVerify verifies a generated backup archive from versitygw and,
// in the same iteration, gunzips the same object raw (the baseline). It
// reports both throughputs, their ratio (target ≥ 1.0) and the peak heap
// during Verify (target ≤ 64 MiB).
func BenchmarkVerify(b *testing.B) {
	e := startS3Bench(b)
	mib := benchArchiveMiB()
	// A 6000-byte random payload compresses to ~10 KB per item (the
	// preferred-version copy follows within deflate's window and costs
	// almost nothing): 1 GiB ≈ 110k items.
	items := mib << 20 / 10100
	spec := backuptest.Spec{Name: fmt.Sprintf("bench-%dmib", mib), Namespaces: 10, ConfigMaps: items / 10, PayloadBytes: 6000}
	start := time.Now()
	e.bucket.PutBackupT(b, spec)
	b.Logf("generated %s: %d items in %s", spec.Name, spec.Items(), time.Since(start).Round(time.Second))
	store := e.store(b, backup.S3Config{}, "")
	client := e.s3.Client()
	key := e.bucket.BackupKey(spec.Name, spec.Name+".tar.gz")
	ctx := context.Background()

	// Warm up once (page cache, connections) so neither side pays for a
	// cold first read.
	rawGunzip(b, ctx, client, e.bucket.Name, key)
	var gunzip, verify time.Duration
	var size int64
	var peak uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		size = rawGunzip(b, ctx, client, e.bucket.Name, key)
		gunzip += time.Since(t0)

		runtime.GC()
		stop := watchHeap(&peak)
		t0 = time.Now()
		rep, err := store.Verify(ctx, spec.Name, backup.VerifyOptions{})
		verify += time.Since(t0)
		stop()
		require.NoError(b, err)
		require.Equal(b, spec.Items(), rep.Items)
	}
	b.StopTimer()
	mbps := func(d time.Duration) float64 { return float64(size) * float64(b.N) / d.Seconds() / (1 << 20) }
	b.ReportMetric(mbps(gunzip), "gunzip-MiB/s")
	b.ReportMetric(mbps(verify), "verify-MiB/s")
	b.ReportMetric(mbps(verify)/mbps(gunzip), "ratio")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(size)/(1<<20), "archive-MiB")
	b.ReportMetric(float64(spec.Items()), "items")
}

// rawGunzip downloads key and decompresses it to nowhere: the baseline.
func rawGunzip(b *testing.B, ctx context.Context, client *s3.Client, bucket, key string) int64 {
	out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	require.NoError(b, err)
	defer out.Body.Close()
	cr := &countReader{r: out.Body}
	zr, err := gzip.NewReader(cr)
	require.NoError(b, err)
	_, err = io.Copy(io.Discard, zr)
	require.NoError(b, err)
	return cr.n
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// watchHeap samples the live heap every 5ms until stop is called.
func watchHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > *peak {
				*peak = ms.HeapAlloc
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// BenchmarkListBackups lists a bucket holding 10,000 backups, counting
// the S3 requests made; the baseline is one ListObjectsV2 page.
func BenchmarkListBackups(b *testing.B) {
	const n = 10000
	e := startS3Bench(b)
	start := time.Now()
	putMarkers(b, e, n)
	b.Logf("created %d backups in %s", n, time.Since(start).Round(time.Second))
	var requests atomic.Int64
	hc := &http.Client{Transport: countingTransport{next: httpTransport(e.s3.CAPEM), n: &requests}}
	store := e.store(b, backup.S3Config{HTTPClient: hc}, "")
	ctx := context.Background()
	b.Run("baseline-one-page", func(b *testing.B) {
		client := e.s3.Client()
		for i := 0; i < b.N; i++ {
			_, err := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(e.bucket.Name), Prefix: aws.String("backups/"), Delimiter: aws.String("/")})
			require.NoError(b, err)
		}
	})
	b.Run("ListBackups", func(b *testing.B) {
		requests.Store(0)
		for i := 0; i < b.N; i++ {
			names, err := store.ListBackups(ctx)
			require.NoError(b, err)
			require.Len(b, names, n)
		}
		b.ReportMetric(float64(requests.Load())/float64(b.N), "requests/op")
	})
}

// putMarkers creates n backups' velero-backup.json, 16 at a time.
func putMarkers(b *testing.B, e *s3Env, n int) {
	client := e.s3.Client()
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	var failed atomic.Value
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			name := fmt.Sprintf("backup-%05d", i)
			_, err := client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(e.bucket.Name),
				Key: aws.String("backups/" + name + "/velero-backup.json"), Body: bytesReader(backuptest.Spec{Name: name}.BackupJSON())})
			if err != nil {
				failed.Store(err)
			}
		}(i)
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
}

func startS3Bench(b *testing.B) *s3Env {
	b.Helper()
	env, err := localenv.Start(context.Background(), localenv.Config{EtcdMembers: 1, SkipAPIServer: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = env.Stop() })
	srv, err := env.StartS3(context.Background(), localenv.S3Config{Backend: localenv.S3BackendFromEnv(), Buckets: []string{"velero-backups"}})
	require.NoError(b, err)
	return &s3Env{env: env, s3: srv,
		creds:  backup.Credentials{Bucket: "velero-backups", Endpoint: srv.Endpoint, AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey},
		bucket: backuptest.Bucket{Client: srv.Client(), Name: "velero-backups"}}
}
