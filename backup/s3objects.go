package backup

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// S3Config configures S3Objects. Credentials are required; everything
// else has a safe default.
type S3Config struct {
	// Credentials are the Bucket's credentials (see LoadCredentials).
	Credentials Credentials
	// Region is the S3 region. Default "us-east-1" (S3-compatible stores
	// ignore it; Velero's AWS plugin needs one).
	Region string
	// URL overrides the endpoint URL (default Credentials.URL(), that is
	// https://<endpoint>); for example a proxy in front of the store.
	URL string
	// CACertPEM holds extra PEM certificates to trust besides the system
	// roots, for stores with a private CA.
	CACertPEM []byte
	// HTTPClient replaces the HTTP client (CACertPEM is then ignored).
	HTTPClient *http.Client
	// MaxAttempts bounds the attempts of each S3 request (5xx answers,
	// throttling and connection errors are retried with backoff), and the
	// resumptions of an interrupted download. Default 5.
	MaxAttempts int
	// Logger receives debug messages about retries. Default: discard.
	Logger *slog.Logger
}

// S3Objects is an ObjectStore reading one S3 bucket. It never writes or
// deletes anything; a download interrupted midway resumes where it broke
// off (see Open).
type S3Objects struct {
	s3     *s3.Client
	bucket string
	cfg    S3Config
	log    *slog.Logger
}

// NewS3Objects validates cfg and returns an S3Objects. It does no I/O.
func NewS3Objects(cfg S3Config) (*S3Objects, error) {
	c := cfg.Credentials
	if c.Bucket == "" || c.AccessKeyID == "" || c.SecretAccessKey == "" || (c.Endpoint == "" && cfg.URL == "") {
		return nil, fmt.Errorf("%w: S3 needs a bucket, an endpoint and both keys", ErrInvalidConfig)
	}
	if cfg.Region == "" {
		cfg.Region = defaultRegion
	}
	if cfg.URL == "" {
		cfg.URL = c.url()
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 5
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		var err error
		if httpClient, err = newHTTPClient(cfg.CACertPEM); err != nil {
			return nil, err
		}
	}
	client := s3.New(s3.Options{
		Region:       cfg.Region,
		BaseEndpoint: aws.String(cfg.URL),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, ""),
		HTTPClient:   httpClient,
		// The widest compatibility with S3-compatible stores (SeaweedFS,
		// Ceph, versitygw): checksums only where the API requires them.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = cfg.MaxAttempts
			o.MaxBackoff = 5 * time.Second
		}),
	})
	return &S3Objects{s3: client, bucket: c.Bucket, cfg: cfg, log: cfg.Logger}, nil
}

func newHTTPClient(caPEM []byte) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 16
	if len(caPEM) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, fmt.Errorf("%w: CACertPEM holds no certificate", ErrInvalidConfig)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr}, nil
}

// String returns s3://<bucket>.
func (o *S3Objects) String() string { return "s3://" + o.bucket }

// Folders lists the common prefixes under prefix with a delimiter: one
// request per 1,000 folders, no object listed.
func (o *S3Objects) Folders(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	p := s3.NewListObjectsV2Paginator(o.s3, &s3.ListObjectsV2Input{
		Bucket: aws.String(o.bucket), Prefix: aws.String(prefix), Delimiter: aws.String("/"),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, o.wrap(err, prefix)
		}
		for _, cp := range page.CommonPrefixes {
			name := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(cp.Prefix), prefix), "/")
			if name != "" {
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// List lists every object under prefix.
func (o *S3Objects) List(ctx context.Context, prefix string) ([]Object, error) {
	var out []Object
	p := s3.NewListObjectsV2Paginator(o.s3, &s3.ListObjectsV2Input{Bucket: aws.String(o.bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, o.wrap(err, prefix)
		}
		for _, obj := range page.Contents {
			k := aws.ToString(obj.Key)
			out = append(out, Object{Key: k, Name: strings.TrimPrefix(k, prefix), Size: aws.ToInt64(obj.Size), LastModified: aws.ToTime(obj.LastModified)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Open starts a download of key. When the body breaks off, reading
// resumes with a Range request pinned to the object's ETag, up to
// MaxAttempts times, so a long download survives a flaky connection and
// never mixes two versions of an object.
func (o *S3Objects) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	r := &objectReader{ctx: ctx, o: o, key: key, size: -1}
	if err := r.get(); err != nil {
		return nil, err
	}
	return r, nil
}

// wrap turns S3 "not found" answers into ErrNotFound.
func (o *S3Objects) wrap(err error, key string) error {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case "NoSuchKey", "NotFound":
			return &ObjectNotFoundError{Where: o.String(), Key: key}
		case "NoSuchBucket":
			return fmt.Errorf("%w: bucket %s does not exist: %w", ErrNotFound, o.bucket, err)
		}
	}
	return err
}
