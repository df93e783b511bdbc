package localenv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/localenv"
)

// TestStartS3 starts the S3 server of $TENANTKIT_S3_BACKEND (versitygw
// unless it says seaweedfs) and checks what every backend must do: HTTPS
// with the environment's CA, SigV4 root credentials, the requested buckets
// and no others created by writes, and a Stop that ends the process.
func TestStartS3(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{EtcdMembers: 1, SkipAPIServer: true})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()

	t.Run("unknown backend", func(t *testing.T) {
		_, err := env.StartS3(ctx, localenv.S3Config{Name: "bad", Backend: "minio"})
		require.ErrorIs(t, err, localenv.ErrInvalidConfig)
		require.Contains(t, err.Error(), `"minio"`)
	})

	backend := localenv.S3BackendFromEnv()
	srv, err := env.StartS3(ctx, localenv.S3Config{Backend: backend, Buckets: []string{"one", "two"}})
	require.NoError(t, err)
	if backend == "" {
		backend = localenv.VersityGW
	}
	require.Equal(t, backend, srv.Backend)
	require.Equal(t, "https://"+srv.Endpoint, srv.URL)
	client := srv.Client()

	out, err := client.ListBuckets(ctx, &s3.ListBucketsInput{})
	require.NoError(t, err)
	var names []string
	for _, b := range out.Buckets {
		names = append(names, aws.ToString(b.Name))
	}
	require.ElementsMatch(t, []string{"one", "two"}, names)
	require.NoError(t, srv.CreateBucket(ctx, "one"), "an existing bucket is not an error")

	body := bytes.Repeat([]byte("tenantkit "), 100_000)
	_, err = client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("one"), Key: aws.String("dir/obj"), Body: bytes.NewReader(body)})
	require.NoError(t, err)
	got, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("one"), Key: aws.String("dir/obj")})
	require.NoError(t, err)
	data, err := io.ReadAll(got.Body)
	require.NoError(t, err)
	got.Body.Close()
	require.Equal(t, body, data)

	_, err = client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("missing"), Key: aws.String("k"), Body: bytes.NewReader(body[:10])})
	requireS3Code(t, err, "NoSuchBucket")

	wrong := *srv
	wrong.SecretKey = "not-the-secret"
	_, err = wrong.Client().ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("one")})
	requireS3Code(t, err, "SignatureDoesNotMatch")

	comps := env.Components()
	require.Equal(t, srv.Name, comps[len(comps)-1].Name)
	require.NotEmpty(t, comps[len(comps)-1].Version)
	require.FileExists(t, filepath.Join(srv.Dir, srv.Name+".log"))

	require.NoError(t, srv.Stop())
	require.False(t, srv.Process().Running())
	_, err = net.DialTimeout("tcp", srv.Endpoint, time.Second)
	require.Error(t, err, "%s still answers after Stop", srv.Endpoint)
	require.NoError(t, srv.Stop(), "second Stop is a no-op")
	if backend == localenv.SeaweedFS {
		var port int
		_, err := fmt.Sscanf(srv.Endpoint, "127.0.0.1:%d", &port)
		require.NoError(t, err)
		require.NoFileExists(t, fmt.Sprintf("/tmp/seaweedfs-s3-%d.sock", port))
	}
}

func requireS3Code(t *testing.T, err error, code string) {
	t.Helper()
	var apiErr smithy.APIError
	require.True(t, errors.As(err, &apiErr), "want %s, got %v", code, err)
	require.Equal(t, code, apiErr.ErrorCode(), "%v", err)
}
