package backup

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func credentialsData() map[string][]byte {
	return map[string][]byte{
		"bucketName": []byte("bucket-91bbb59f-7d0c"),
		"endpoint":   []byte("s3.example.org"),
		"accessKey":  []byte("AKIAEXAMPLE"),
		"secretKey":  []byte("wJalrXUtnFEMI/K7MDENG"),
	}
}

func TestLoadCredentials_credentialsSecret(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(map[string][]byte)
		want   Credentials
		badKey string
	}{
		{"valid", func(map[string][]byte) {}, Credentials{Bucket: "bucket-91bbb59f-7d0c", Endpoint: "s3.example.org", AccessKeyID: "AKIAEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG"}, ""},
		{"endpoint with port and scheme", func(d map[string][]byte) { d["endpoint"] = []byte("https://s3.example.org:8443/") },
			Credentials{Bucket: "bucket-91bbb59f-7d0c", Endpoint: "s3.example.org:8443", AccessKeyID: "AKIAEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG"}, ""},
		{"missing secretKey", func(d map[string][]byte) { delete(d, "secretKey") }, Credentials{}, "secretKey"},
		{"empty accessKey", func(d map[string][]byte) { d["accessKey"] = []byte(" ") }, Credentials{}, "accessKey"},
		{"endpoint with a path", func(d map[string][]byte) { d["endpoint"] = []byte("s3.example.org/bucket") }, Credentials{}, "endpoint"},
		{"endpoint with a bad scheme", func(d map[string][]byte) { d["endpoint"] = []byte("ftp://s3.example.org") }, Credentials{}, "endpoint"},
		{"bad port", func(d map[string][]byte) { d["endpoint"] = []byte("s3.example.org:99999") }, Credentials{}, "endpoint"},
		{"bucket name with capitals", func(d map[string][]byte) { d["bucketName"] = []byte("Velero") }, Credentials{}, "bucketName"},
		{"access key breaking the INI file", func(d map[string][]byte) { d["accessKey"] = []byte("a=b") }, Credentials{}, "accessKey"},
		{"secret key with a newline", func(d map[string][]byte) { d["secretKey"] = []byte("abc\n[evil]") }, Credentials{}, "secretKey"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := credentialsData()
			tt.edit(data)
			got, err := parseCredentialsSecret("bucket-b-u-credentials", data)
			if tt.badKey == "" {
				require.NoError(t, err)
				require.Equal(t, tt.want, got)
				return
			}
			require.ErrorIs(t, err, ErrInvalidSecret)
			var se *SecretError
			require.True(t, errors.As(err, &se))
			require.Equal(t, tt.badKey, se.Key)
			require.NotContains(t, err.Error(), "wJalrXUtnFEMI", "error must not leak the secret key")
		})
	}
}

func TestLoadCredentials_bucketInfo(t *testing.T) {
	valid := `{"metadata":{"name":"bc-1"},"spec":{"bucketName":"bucket-91bbb59f","authenticationType":"KEY","secretS3":{"endpoint":"https://s3.example.org","region":"","accessKeyID":"AK","accessSecretKey":"SK-secret"},"protocols":["s3"]}}`
	got, err := parseBucketInfo("bucket-b-u", []byte(valid))
	require.NoError(t, err)
	require.Equal(t, Credentials{Bucket: "bucket-91bbb59f", Endpoint: "s3.example.org", AccessKeyID: "AK", SecretAccessKey: "SK-secret"}, got)

	for name, doc := range map[string]string{
		"not JSON":         `{"spec":`,
		"no secretS3":      `{"spec":{"bucketName":"bucket-1"}}`,
		"no bucket name":   `{"spec":{"secretS3":{"endpoint":"h","accessKeyID":"a","accessSecretKey":"s"}}}`,
		"wrong field type": `{"spec":{"bucketName":7}}`,
		"empty secret":     `{"spec":{"bucketName":"bucket-1","secretS3":{"endpoint":"h","accessKeyID":"a","accessSecretKey":""}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseBucketInfo("bucket-b-u", []byte(doc))
			require.ErrorIs(t, err, ErrInvalidSecret)
			require.Contains(t, err.Error(), "BucketInfo")
		})
	}
}

func TestLoadCredentials_fallsBackToCOSISecret(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewSimpleClientset()
	_, err := LoadCredentials(ctx, kube, BucketRef{Namespace: "tenant-a", Bucket: "backups", User: "velero"})
	require.ErrorIs(t, err, ErrSecretNotFound)
	_, err = LoadCredentials(ctx, kube, BucketRef{Namespace: "tenant-a", Bucket: "backups"})
	require.ErrorIs(t, err, ErrInvalidConfig)

	_, err = kube.CoreV1().Secrets("tenant-a").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bucket-backups-velero"},
		Data:       map[string][]byte{bucketInfoKey: []byte(`{"spec":{"bucketName":"bucket-1","secretS3":{"endpoint":"https://s3.example.org","accessKeyID":"AK","accessSecretKey":"SK"}}}`)},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	got, err := LoadCredentials(ctx, kube, BucketRef{Namespace: "tenant-a", Bucket: "backups", User: "velero"})
	require.NoError(t, err)
	require.Equal(t, "bucket-1", got.Bucket)

	_, err = kube.CoreV1().Secrets("tenant-a").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bucket-backups-velero-credentials"}, Data: credentialsData(),
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	got, err = LoadCredentials(ctx, kube, BucketRef{Namespace: "tenant-a", Bucket: "backups", User: "velero"})
	require.NoError(t, err)
	require.Equal(t, "bucket-91bbb59f-7d0c", got.Bucket, "the -credentials Secret wins")
	require.NotContains(t, got.String(), got.SecretAccessKey)
}

// credentialsFromSecret reads either Secret without a cluster: the COSI
// Secret by its BucketInfo key, the -credentials Secret by its four keys.
func TestLoadCredentials_eitherSecret(t *testing.T) {
	cosi := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bucket-backups-velero"},
		Data: map[string][]byte{bucketInfoKey: []byte(`{"spec":{"bucketName":"bucket-1","secretS3":{"endpoint":"https://s3.example.org:8443","accessKeyID":"AK","accessSecretKey":"SK"}}}`)}}
	got, err := credentialsFromSecret(cosi)
	require.NoError(t, err)
	require.Equal(t, Credentials{Bucket: "bucket-1", Endpoint: "s3.example.org:8443", AccessKeyID: "AK", SecretAccessKey: "SK"}, got)

	plain := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bucket-backups-velero-credentials"}, Data: credentialsData()}
	got, err = credentialsFromSecret(plain)
	require.NoError(t, err)
	require.Equal(t, "bucket-91bbb59f-7d0c", got.Bucket)

	cosi.Data[bucketInfoKey] = []byte(`{"spec":{"bucketName":"bucket-1"}}`)
	_, err = credentialsFromSecret(cosi)
	var se *SecretError
	require.ErrorAs(t, err, &se)
	require.Equal(t, "bucket-backups-velero", se.Secret)
	require.Equal(t, bucketInfoKey, se.Key)

	_, err = credentialsFromSecret(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "other"}})
	require.ErrorIs(t, err, ErrInvalidSecret, "neither layout")
	_, err = credentialsFromSecret(nil)
	require.ErrorIs(t, err, ErrInvalidSecret)
}

// CredentialsSecret writes what LoadCredentials reads.
func TestCredentialsSecret_roundTrip(t *testing.T) {
	ctx := t.Context()
	ref := BucketRef{Namespace: "tenant-a", Bucket: "backups", User: "velero"}
	want := Credentials{Bucket: "bucket-91bbb59f", Endpoint: "s3.example.org:8443", AccessKeyID: "AK", SecretAccessKey: "SK"}
	s := CredentialsSecret(ref, want)
	require.Equal(t, "bucket-backups-velero-credentials", s.Name)
	require.Equal(t, "true", s.Labels["apps.cozystack.io/user-secret"])
	kube := fake.NewClientset()
	_, err := kube.CoreV1().Secrets(s.Namespace).Create(ctx, s, metav1.CreateOptions{})
	require.NoError(t, err)
	got, err := LoadCredentials(ctx, kube, ref)
	require.NoError(t, err)
	require.Equal(t, want, got)
}
