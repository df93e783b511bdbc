package backup_test

import (
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func gzipWriter(w io.Writer) *gzip.Writer { return gzip.NewWriter(w) }

func deleteInput(bucket, key string) *s3.DeleteObjectInput {
	return &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

type countingTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

func httpTransport(caPEM []byte) http.RoundTripper {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	return &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
}
