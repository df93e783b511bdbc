package backup

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Credentials are a Cozystack Bucket's S3 credentials, as the Bucket's
// Secrets hold them.
type Credentials struct {
	// Bucket is the bucket name the driver assigned (key bucketName).
	Bucket string
	// Endpoint is the S3 endpoint as a bare host, optionally with a port
	// (key endpoint). The S3 URL is https://Endpoint.
	Endpoint string
	// AccessKeyID is the access key (key accessKey).
	AccessKeyID string
	// SecretAccessKey is the secret key (key secretKey).
	SecretAccessKey string
}

// url returns the S3 endpoint URL, https://Endpoint.
func (c Credentials) url() string { return "https://" + c.Endpoint }

// String describes the credentials without the secret key.
func (c Credentials) String() string {
	return fmt.Sprintf("bucket %s at %s (access key %s)", c.Bucket, c.Endpoint, c.AccessKeyID)
}

// CredentialsSecretName returns the name of the Secret Cozystack derives
// for a Bucket user: bucket-<bucket>-<user>-credentials.
func CredentialsSecretName(bucket, user string) string {
	return "bucket-" + bucket + "-" + user + "-credentials"
}

// CredentialsSecret returns the Secret Cozystack writes for a Bucket user
// (packages/system/bucket, user-credentials.yaml): named
// CredentialsSecretName in ref's namespace, labelled
// apps.cozystack.io/user-secret, with c in the keys bucketName, endpoint,
// accessKey and secretKey. It is the inverse of LoadCredentials, for tools
// and tests that stand in for Cozystack's Bucket (the examples create it on
// the embedded local environment's S3 server).
func CredentialsSecret(ref BucketRef, c Credentials) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: CredentialsSecretName(ref.Bucket, ref.User),
			Labels: map[string]string{userSecretLabel: "true"}},
		Data: map[string][]byte{"bucketName": []byte(c.Bucket), "endpoint": []byte(c.Endpoint),
			"accessKey": []byte(c.AccessKeyID), "secretKey": []byte(c.SecretAccessKey)},
	}
}

// userSecretLabel marks the Secrets Cozystack shows its users.
const userSecretLabel = "apps.cozystack.io/user-secret"

// bucketInfoSecretName returns the name of the COSI Secret of a Bucket
// user: bucket-<bucket>-<user>.
func bucketInfoSecretName(bucket, user string) string { return "bucket-" + bucket + "-" + user }

// bucketInfoKey is the key of a COSI bucket-<bucket>-<user> Secret that
// holds the BucketInfo JSON document.
const bucketInfoKey = "BucketInfo"

// BucketRef names a Cozystack Bucket user's credentials: the Bucket
// Bucket in Namespace (the tenant namespace, such as tenant-demo), as
// User.
type BucketRef struct {
	// Namespace is the Bucket's namespace.
	Namespace string
	// Bucket is the Bucket application's name (not the S3 bucket name).
	Bucket string
	// User is the Bucket user.
	User string
}

// LoadCredentials is the way to get a Bucket's Credentials: it reads the
// Secret Cozystack writes for ref's user, bucket-<bucket>-<user>-credentials
// (keys bucketName, endpoint, accessKey, secretKey), or, when that Secret
// does not exist, the COSI Secret bucket-<bucket>-<user> (key
// BucketInfo, JSON). It returns ErrInvalidConfig for a ref with an
// empty field, ErrSecretNotFound when neither Secret exists, and a
// *SecretError (ErrInvalidSecret) naming the Secret and key, never the
// secret key, when the Secret it found is malformed. For an S3 store
// outside Cozystack, fill Credentials in directly.
func LoadCredentials(ctx context.Context, kube kubernetes.Interface, ref BucketRef) (Credentials, error) {
	if ref.Namespace == "" || ref.Bucket == "" || ref.User == "" {
		return Credentials{}, fmt.Errorf("%w: BucketRef needs a namespace, a bucket and a user", ErrInvalidConfig)
	}
	namespace := ref.Namespace
	secrets := kube.CoreV1().Secrets(namespace)
	name := CredentialsSecretName(ref.Bucket, ref.User)
	s, err := secrets.Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		return credentialsFromSecret(s)
	}
	if !apierrors.IsNotFound(err) {
		return Credentials{}, fmt.Errorf("get secret %s/%s: %w", namespace, name, err)
	}
	cosi := bucketInfoSecretName(ref.Bucket, ref.User)
	s, err = secrets.Get(ctx, cosi, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return Credentials{}, fmt.Errorf("%w: neither %s/%s nor %s/%s exists", ErrSecretNotFound, namespace, name, namespace, cosi)
	}
	if err != nil {
		return Credentials{}, fmt.Errorf("get secret %s/%s: %w", namespace, cosi, err)
	}
	return credentialsFromSecret(s)
}

// credentialsFromSecret reads a Bucket's credentials from either Secret
// Cozystack writes for a Bucket user.
func credentialsFromSecret(s *corev1.Secret) (Credentials, error) {
	if s == nil {
		return Credentials{}, &SecretError{Secret: "<nil>", Key: bucketInfoKey, Reason: "missing"}
	}
	if info, ok := s.Data[bucketInfoKey]; ok {
		return parseBucketInfo(s.Name, info)
	}
	return parseCredentialsSecret(s.Name, s.Data)
}

// parseCredentialsSecret parses the data of a bucket-<bucket>-<user>-credentials
// Secret (keys bucketName, endpoint, accessKey, secretKey). secretName is
// used in errors only.
func parseCredentialsSecret(secretName string, data map[string][]byte) (Credentials, error) {
	get := func(key string) (string, error) {
		v, ok := data[key]
		if !ok {
			return "", &SecretError{Secret: secretName, Key: key, Reason: "missing"}
		}
		s := strings.TrimSpace(string(v))
		if s == "" {
			return "", &SecretError{Secret: secretName, Key: key, Reason: "empty"}
		}
		return s, nil
	}
	var c Credentials
	var err error
	if c.Bucket, err = get("bucketName"); err != nil {
		return Credentials{}, err
	}
	if c.AccessKeyID, err = get("accessKey"); err != nil {
		return Credentials{}, err
	}
	if c.SecretAccessKey, err = get("secretKey"); err != nil {
		return Credentials{}, err
	}
	endpoint, err := get("endpoint")
	if err != nil {
		return Credentials{}, err
	}
	if c.Endpoint, err = bareHost(endpoint); err != nil {
		return Credentials{}, &SecretError{Secret: secretName, Key: "endpoint", Reason: err.Error()}
	}
	if err := checkCredentials(secretName, c, "bucketName", "accessKey", "secretKey"); err != nil {
		return Credentials{}, err
	}
	return c, nil
}

// bucketInfo is the part of a COSI BucketInfo document tenantkit reads.
type bucketInfo struct {
	Spec struct {
		BucketName string `json:"bucketName"`
		SecretS3   *struct {
			Endpoint        string `json:"endpoint"`
			AccessKeyID     string `json:"accessKeyID"`
			AccessSecretKey string `json:"accessSecretKey"`
		} `json:"secretS3"`
	} `json:"spec"`
}

// parseBucketInfo parses the BucketInfo key of a COSI bucket-<bucket>-<user>
// Secret: JSON with spec.bucketName and spec.secretS3.{endpoint,
// accessKeyID, accessSecretKey}. secretName is used in errors only.
func parseBucketInfo(secretName string, data []byte) (Credentials, error) {
	var info bucketInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return Credentials{}, &SecretError{Secret: secretName, Key: bucketInfoKey, Reason: "not valid JSON: " + jsonErrorSummary(err)}
	}
	field := func(path, v string) (string, error) {
		v = strings.TrimSpace(v)
		if v == "" {
			return "", &SecretError{Secret: secretName, Key: bucketInfoKey, Reason: path + " is missing or empty"}
		}
		return v, nil
	}
	var c Credentials
	var err error
	if c.Bucket, err = field("spec.bucketName", info.Spec.BucketName); err != nil {
		return Credentials{}, err
	}
	s3 := info.Spec.SecretS3
	if s3 == nil {
		return Credentials{}, &SecretError{Secret: secretName, Key: bucketInfoKey, Reason: "spec.secretS3 is missing"}
	}
	endpoint, err := field("spec.secretS3.endpoint", s3.Endpoint)
	if err != nil {
		return Credentials{}, err
	}
	if c.Endpoint, err = bareHost(endpoint); err != nil {
		return Credentials{}, &SecretError{Secret: secretName, Key: bucketInfoKey, Reason: "spec.secretS3.endpoint: " + err.Error()}
	}
	if c.AccessKeyID, err = field("spec.secretS3.accessKeyID", s3.AccessKeyID); err != nil {
		return Credentials{}, err
	}
	if c.SecretAccessKey, err = field("spec.secretS3.accessSecretKey", s3.AccessSecretKey); err != nil {
		return Credentials{}, err
	}
	if err := checkCredentials(secretName, c, "spec.bucketName", "spec.secretS3.accessKeyID", "spec.secretS3.accessSecretKey"); err != nil {
		return Credentials{}, err
	}
	return c, nil
}

// checkCredentials rejects values that cannot be a bucket name or key and
// would break the INI file Velero reads (line breaks, '=' in a key ID).
func checkCredentials(secret string, c Credentials, bucketKey, accessKey, secretKey string) error {
	if !validBucketName(c.Bucket) {
		return &SecretError{Secret: secret, Key: bucketKey, Reason: "not a valid S3 bucket name"}
	}
	if strings.ContainsAny(c.AccessKeyID, "\r\n\t =[]") {
		return &SecretError{Secret: secret, Key: accessKey, Reason: "contains whitespace or INI syntax"}
	}
	if strings.ContainsAny(c.SecretAccessKey, "\r\n") {
		return &SecretError{Secret: secret, Key: secretKey, Reason: "contains a line break"}
	}
	return nil
}

// validBucketName checks the S3 bucket naming rules that matter for
// path-style access: 3-63 characters of lower-case letters, digits, '.'
// and '-', starting and ending with a letter or digit.
func validBucketName(b string) bool {
	if len(b) < 3 || len(b) > 63 {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && c != '.' && c != '-' {
			return false
		}
		if (i == 0 || i == len(b)-1) && !alnum {
			return false
		}
	}
	return true
}

// bareHost returns endpoint as host[:port]. A leading https:// or http://
// is removed (COSI endpoints carry one); paths, queries, user info and
// whitespace are refused.
func bareHost(endpoint string) (string, error) {
	e := endpoint
	if i := strings.Index(e, "://"); i >= 0 {
		scheme := strings.ToLower(e[:i])
		if scheme != "https" && scheme != "http" {
			return "", fmt.Errorf("scheme %q is not http or https", e[:i])
		}
		e = e[i+3:]
	}
	e = strings.TrimSuffix(e, "/")
	if e == "" {
		return "", fmt.Errorf("no host")
	}
	if strings.ContainsAny(e, "/?#@ \t\r\n") {
		return "", fmt.Errorf("not a bare host (want host or host:port)")
	}
	u, err := url.Parse("https://" + e)
	if err != nil || u.Host != e || u.Hostname() == "" {
		return "", fmt.Errorf("not a bare host (want host or host:port)")
	}
	if p := u.Port(); p != "" {
		var n int
		if _, err := fmt.Sscanf(p, "%d", &n); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("port %q out of range", p)
		}
	}
	return e, nil
}

// jsonErrorSummary shortens a JSON error without echoing the document
// (which holds the secret key).
func jsonErrorSummary(err error) string {
	switch e := err.(type) {
	case *json.SyntaxError:
		return fmt.Sprintf("syntax error at offset %d", e.Offset)
	case *json.UnmarshalTypeError:
		return fmt.Sprintf("field %s has the wrong type (%s)", e.Field, e.Value)
	default:
		return "unexpected end or content"
	}
}
