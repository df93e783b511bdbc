package localenv

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/cozystack/tenantkit/internal/process"
	"github.com/cozystack/tenantkit/internal/serverbin"
	"github.com/cozystack/tenantkit/localenv/pki"
)

// S3Backend selects the S3 server StartS3 runs.
type S3Backend string

const (
	// VersityGW is versitygw v1.8.0 with its POSIX backend (the default,
	// also for the zero value).
	VersityGW S3Backend = "versitygw"
	// SeaweedFS is SeaweedFS weed 4.53 run as `weed mini` (master, volume,
	// filer and S3 in one process), the S3 server Cozystack runs: an opt-in
	// parity backend, slower to build (minutes, 230 MB) and to start
	// (seconds). See serverbin.SeaweedFS.
	SeaweedFS S3Backend = "seaweedfs"
)

// S3BackendEnv names the environment variable S3BackendFromEnv reads.
const S3BackendEnv = "TENANTKIT_S3_BACKEND"

// S3BackendFromEnv returns the backend named by $TENANTKIT_S3_BACKEND, for
// tests that can run against either server; unset means the default
// (versitygw). StartS3 refuses a value that names no backend.
func S3BackendFromEnv() S3Backend { return S3Backend(os.Getenv(S3BackendEnv)) }

// S3Config configures an S3 server started by StartS3. The zero value
// starts versitygw named "s3" with random credentials and no bucket.
type S3Config struct {
	// Name names the server's component and directory. Default "s3".
	Name string
	// Backend selects the server. Default (empty): VersityGW.
	Backend S3Backend
	// AccessKey and SecretKey are the root credentials (SigV4). Default:
	// random.
	AccessKey, SecretKey string
	// Buckets are created once the server is ready.
	Buckets []string
}

// S3Server is a running S3 server on loopback, serving HTTPS with a
// certificate from the environment's CA.
type S3Server struct {
	// Name is the component name.
	Name string
	// Backend is the server behind it.
	Backend S3Backend
	// URL is the https URL, for example https://127.0.0.1:40123.
	URL string
	// Endpoint is the bare host:port, as a Cozystack Bucket Secret's
	// endpoint key holds it.
	Endpoint string
	// AccessKey and SecretKey are the root credentials.
	AccessKey, SecretKey string
	// CAPEM is the CA that signed the serving certificate (the
	// environment's CA).
	CAPEM []byte
	// Dir holds the server's data, certificate and log.
	Dir string

	proc    *process.Process
	cleanup func() error // after the process has exited; may be nil
}

// StartS3 starts an S3 server (cfg.Backend) on free loopback ports, waits
// until it serves HTTPS with a certificate from the environment's CA and
// creates cfg.Buckets. Stop stops it with the environment.
func (e *Env) StartS3(ctx context.Context, cfg S3Config) (*S3Server, error) {
	if e.ca == nil {
		return nil, ErrUnsupported
	}
	if e.isStopped() {
		return nil, ErrStopped
	}
	cfg, server, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	bin, err := e.bins.path(ctx, server)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(e.dir, cfg.Name)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.Name, err)
	}
	serving, err := e.ca.Issue(pki.Spec{CommonName: cfg.Name, DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
	if err != nil {
		return nil, err
	}
	certFile, keyFile, err := serving.WriteFiles(dir, "serving")
	if err != nil {
		return nil, err
	}
	s := &S3Server{Name: cfg.Name, Backend: cfg.Backend, AccessKey: cfg.AccessKey,
		SecretKey: cfg.SecretKey, CAPEM: e.ca.CertPEM, Dir: dir}
	files := s3TLS{cert: certFile, key: keyFile}
	if cfg.Backend == SeaweedFS {
		err = s.startSeaweedFS(bin, files)
	} else {
		err = s.startVersityGW(bin, files)
	}
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: e.ca.Pool()}}}
	err = process.WaitReady(ctx, s.proc, e.cfg.StartTimeout, process.HTTPOK(client, s.URL+"/healthz"))
	if err != nil {
		_ = s.proc.Kill()
		return nil, errors.Join(err, s.clean())
	}
	e.OnStop(s.clean)
	e.Track(Component{Name: cfg.Name, Version: e.bins.version(server), Endpoint: s.URL, LogPath: s.proc.LogPath(), Process: s.proc})
	for _, b := range cfg.Buckets {
		if err := s.CreateBucket(ctx, b); err != nil {
			return nil, err
		}
	}
	e.log.Info("s3 server ready", "name", cfg.Name, "backend", cfg.Backend, "url", s.URL)
	return s, nil
}

// withDefaults fills in the defaults and picks the backend's server.
func (cfg S3Config) withDefaults() (S3Config, serverbin.Server, error) {
	if cfg.Name == "" {
		cfg.Name = "s3"
	}
	if cfg.AccessKey == "" {
		cfg.AccessKey = "TK" + rand.Text()[:18]
	}
	if cfg.SecretKey == "" {
		cfg.SecretKey = strings.ToLower(rand.Text() + rand.Text())
	}
	switch cfg.Backend {
	case "", VersityGW:
		cfg.Backend = VersityGW
		return cfg, serverbin.VersityGW, nil
	case SeaweedFS:
		return cfg, serverbin.SeaweedFS, nil
	}
	return cfg, serverbin.Server{}, fmt.Errorf("%w: S3 backend %q (want %q or %q)", ErrInvalidConfig, cfg.Backend, VersityGW, SeaweedFS)
}

// s3TLS is the serving certificate and key files.
type s3TLS struct{ cert, key string }

// startVersityGW starts versitygw on one free port, serving HTTPS with an
// unauthenticated /healthz.
func (s *S3Server) startVersityGW(bin string, t s3TLS) error {
	port, err := FreePort()
	if err != nil {
		return err
	}
	s.Endpoint = fmt.Sprintf("127.0.0.1:%d", port)
	s.URL = "https://" + s.Endpoint
	s.proc, err = process.Start(process.Config{
		Name: s.Name, Path: bin,
		Args:    []string{"--addr", s.Endpoint, "--cert", t.cert, "--key", t.key, "--health", "/healthz", filepath.Join(s.Dir, "data")},
		Env:     []string{"ROOT_ACCESS_KEY=" + s.AccessKey, "ROOT_SECRET_KEY=" + s.SecretKey},
		LogPath: filepath.Join(s.Dir, s.Name+".log"),
	})
	return err
}

// Client returns an S3 client for the root user (path-style, us-east-1).
func (s *S3Server) Client() *s3.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CAPEM)
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(s.URL),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
		HTTPClient:   &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: time.Minute},
	})
}

// CreateBucket creates a bucket; an existing bucket is not an error.
func (s *S3Server) CreateBucket(ctx context.Context, name string) error {
	_, err := s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode() == "BucketAlreadyOwnedByYou" || apiErr.ErrorCode() == "BucketAlreadyExists") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create bucket %s: %w", name, err)
	}
	return nil
}

// Stop stops the server and removes what it left outside its directory.
func (s *S3Server) Stop() error { return errors.Join(s.proc.Stop(), s.clean()) }

// clean runs the backend's cleanup once the process has exited.
func (s *S3Server) clean() error {
	if s.cleanup == nil || s.proc.Running() {
		return nil
	}
	return s.cleanup()
}

// Process returns the server's process.
func (s *S3Server) Process() *Process { return s.proc }
