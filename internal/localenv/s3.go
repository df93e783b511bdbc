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

	"github.com/cozystack/tenantkit/internal/pki"
	"github.com/cozystack/tenantkit/internal/process"
	"github.com/cozystack/tenantkit/internal/serverbin"
)

// S3Config configures an S3 server (versitygw v1.8.0 with its POSIX
// backend) started by StartS3. The zero value starts one named "s3" with
// random credentials and no bucket.
type S3Config struct {
	// Name names the server's component and directory. Default "s3".
	Name string
	// AccessKey and SecretKey are the root credentials (SigV4). Default:
	// random.
	AccessKey, SecretKey string
	// Buckets are created once the server is ready.
	Buckets []string
	// Binary overrides the versitygw binary built by package serverbin.
	Binary string
}

// S3Server is a running S3 server on loopback, serving HTTPS with a
// certificate from the environment's CA.
type S3Server struct {
	// Name is the component name.
	Name string
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
	// Dir holds the server's data (one folder per bucket), certificate and
	// log.
	Dir string

	proc *process.Process
}

// StartS3 starts an S3 server on a free loopback port, waits until it is
// ready and creates cfg.Buckets. Stop stops it with the environment.
func (e *Env) StartS3(ctx context.Context, cfg S3Config) (*S3Server, error) {
	if e.ca == nil {
		return nil, ErrUnsupported
	}
	if e.isStopped() {
		return nil, ErrStopped
	}
	if cfg.Name == "" {
		cfg.Name = "s3"
	}
	if cfg.AccessKey == "" {
		cfg.AccessKey = "TK" + rand.Text()[:18]
	}
	if cfg.SecretKey == "" {
		cfg.SecretKey = strings.ToLower(rand.Text() + rand.Text())
	}
	bin, err := binary(ctx, cfg.Binary, serverbin.VersityGW)
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
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	s := &S3Server{Name: cfg.Name, Endpoint: fmt.Sprintf("127.0.0.1:%d", port), AccessKey: cfg.AccessKey,
		SecretKey: cfg.SecretKey, CAPEM: e.ca.CertPEM, Dir: dir}
	s.URL = "https://" + s.Endpoint
	s.proc, err = process.Start(process.Config{
		Name: cfg.Name, Path: bin,
		Args:    []string{"--addr", s.Endpoint, "--cert", certFile, "--key", keyFile, "--health", "/healthz", filepath.Join(dir, "data")},
		Env:     []string{"ROOT_ACCESS_KEY=" + cfg.AccessKey, "ROOT_SECRET_KEY=" + cfg.SecretKey},
		LogPath: filepath.Join(dir, cfg.Name+".log"),
	})
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: e.ca.Pool()}}}
	err = process.WaitReady(ctx, s.proc, e.cfg.StartTimeout, process.HTTPOK(client, s.URL+"/healthz"))
	if err != nil {
		_ = s.proc.Kill()
		return nil, err
	}
	e.Track(Component{Name: cfg.Name, Version: serverbin.VersityGW.Version, Endpoint: s.URL, LogPath: s.proc.LogPath(), Process: s.proc})
	for _, b := range cfg.Buckets {
		if err := s.CreateBucket(ctx, b); err != nil {
			return nil, err
		}
	}
	e.log.Info("s3 server ready", "name", cfg.Name, "url", s.URL)
	return s, nil
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

// Stop stops the server.
func (s *S3Server) Stop() error { return s.proc.Stop() }

// Process returns the server's process.
func (s *S3Server) Process() *process.Process { return s.proc }
