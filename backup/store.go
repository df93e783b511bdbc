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
	"path"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// StoreConfig configures a Store. Credentials are required; everything else
// has a safe default.
type StoreConfig struct {
	// Credentials are the Bucket's credentials (see LoadCredentials).
	Credentials Credentials
	// Prefix is the backup storage location's prefix inside the bucket.
	// Default: the bucket root.
	Prefix string
	// Region is the S3 region. Default DefaultRegion.
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

// Store reads Velero's backups straight from the bucket with the S3 API:
// no Velero server and no DownloadRequest are involved. It never writes or
// deletes anything. Its methods are safe for concurrent use.
type Store struct {
	s3     *s3.Client
	bucket string
	prefix string
	cfg    StoreConfig
	log    *slog.Logger
}

// NewStore validates cfg and returns a Store. It does no I/O.
func NewStore(cfg StoreConfig) (*Store, error) {
	c := cfg.Credentials
	if c.Bucket == "" || c.AccessKeyID == "" || c.SecretAccessKey == "" || (c.Endpoint == "" && cfg.URL == "") {
		return nil, fmt.Errorf("%w: store needs a bucket, an endpoint and both keys", ErrInvalidConfig)
	}
	if err := ValidatePrefix(cfg.Prefix); err != nil {
		return nil, err
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	if cfg.URL == "" {
		cfg.URL = c.URL()
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
	return &Store{s3: client, bucket: c.Bucket, prefix: cfg.Prefix, cfg: cfg, log: cfg.Logger}, nil
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

// Bucket returns the bucket name.
func (s *Store) Bucket() string { return s.bucket }

// Prefix returns the location prefix.
func (s *Store) Prefix() string { return s.prefix }

// key joins the prefix and parts into an object key.
func (s *Store) key(parts ...string) string {
	if s.prefix != "" {
		parts = append([]string{s.prefix}, parts...)
	}
	return path.Join(parts...)
}

// backupKey returns the key of file in backup name's folder.
func (s *Store) backupKey(name, file string) string { return s.key("backups", name, file) }

// ListBackups returns the names of the backups in the bucket (the folders
// under <prefix>/backups/), sorted. It lists with a delimiter, so it costs
// one request per 1,000 backups and reads no backup's files.
//
// On SeaweedFS (what Cozystack runs) a deleted backup's folder stays listed
// until SeaweedFS removes empty folders, two minutes or more after the last
// object in it was deleted; Backup and Verify return ErrNotFound for it.
// Velero's own bucket listing sees the same folders.
func (s *Store) ListBackups(ctx context.Context) ([]string, error) {
	folders, err := s.listFolders(ctx, s.key("backups")+"/")
	if err != nil {
		return nil, fmt.Errorf("list backups: %w", err)
	}
	return folders, nil
}

// ListRestores returns the names of the restores whose logs and results are
// in the bucket, sorted.
func (s *Store) ListRestores(ctx context.Context) ([]string, error) {
	folders, err := s.listFolders(ctx, s.key("restores")+"/")
	if err != nil {
		return nil, fmt.Errorf("list restores: %w", err)
	}
	return folders, nil
}

// CheckPrefix lists the top level of the location prefix and returns a
// *PrefixError (ErrInvalidPrefix) if it holds folders other than Velero's
// own (backups, restores, restic, metadata, plugins, kopia): Velero marks
// such a location Unavailable.
func (s *Store) CheckPrefix(ctx context.Context) error {
	root := ""
	if s.prefix != "" {
		root = s.prefix + "/"
	}
	folders, err := s.listFolders(ctx, root)
	if err != nil {
		return fmt.Errorf("check prefix: %w", err)
	}
	if foreign := ForeignFolders(folders); len(foreign) > 0 {
		return &PrefixError{Prefix: s.prefix, Foreign: foreign,
			Reason: "holds folders that are not Velero's (use a dedicated prefix)"}
	}
	return nil
}

// listFolders returns the common prefixes directly under prefix, as names.
func (s *Store) listFolders(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	p := s3.NewListObjectsV2Paginator(s.s3, &s3.ListObjectsV2Input{
		Bucket: aws.String(s.bucket), Prefix: aws.String(prefix), Delimiter: aws.String("/"),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, s.wrap(err, prefix)
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

// Object describes one object in a backup's folder.
type Object struct {
	// Key is the full object key.
	Key string
	// Name is the file name inside the backup's folder.
	Name string
	// Size is the object's size in bytes.
	Size int64
	// LastModified is when the object was last written.
	LastModified time.Time
}

// Files lists the objects in backup name's folder, sorted by name. It
// returns ErrNotFound when the folder is empty.
func (s *Store) Files(ctx context.Context, name string) ([]Object, error) {
	prefix := s.key("backups", name) + "/"
	var out []Object
	p := s3.NewListObjectsV2Paginator(s.s3, &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list files of %s: %w", name, s.wrap(err, prefix))
		}
		for _, o := range page.Contents {
			k := aws.ToString(o.Key)
			out = append(out, Object{Key: k, Name: strings.TrimPrefix(k, prefix), Size: aws.ToInt64(o.Size), LastModified: aws.ToTime(o.LastModified)})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: backup %s has no files under %s", ErrNotFound, name, prefix)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// open starts a download of key that resumes after interrupted reads.
func (s *Store) open(ctx context.Context, key string) (*objectReader, error) {
	r := &objectReader{ctx: ctx, s: s, key: key, size: -1}
	if err := r.get(); err != nil {
		return nil, err
	}
	return r, nil
}

// readAll downloads a small object whole.
func (s *Store) readAll(ctx context.Context, key string, limit int64) ([]byte, error) {
	r, err := s.open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrMalformed, key, limit)
	}
	return data, nil
}

// wrap turns S3 "not found" answers into ErrNotFound.
func (s *Store) wrap(err error, key string) error {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case "NoSuchKey", "NotFound":
			return fmt.Errorf("%w: s3://%s/%s", ErrNotFound, s.bucket, key)
		case "NoSuchBucket":
			return fmt.Errorf("%w: bucket %s does not exist: %w", ErrNotFound, s.bucket, err)
		}
	}
	return err
}
