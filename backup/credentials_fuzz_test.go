package backup

import (
	"bytes"
	"errors"
	"testing"
)

func FuzzParseCredentialsSecret(f *testing.F) {
	f.Add("bucket-1", "s3.example.org", "AK", "SK")
	f.Add("bucket-1", "https://s3.example.org:8443/", "AK", "SK")
	f.Add("", "", "", "")
	f.Add("B", "h/p", "a=b", "x\ny")
	f.Fuzz(func(t *testing.T, bucket, endpoint, ak, sk string) {
		c, err := parseCredentialsSecret("s", map[string][]byte{"bucketName": []byte(bucket), "endpoint": []byte(endpoint), "accessKey": []byte(ak), "secretKey": []byte(sk)})
		if err != nil {
			if !errors.Is(err, ErrInvalidSecret) {
				t.Fatalf("untyped error: %v", err)
			}
			if len(sk) > 3 && bytes.Contains([]byte(err.Error()), []byte(sk)) {
				t.Fatalf("error leaks the secret key: %v", err)
			}
			return
		}
		if _, err := AddonValues(c, ValuesOptions{}); err != nil {
			t.Fatalf("accepted credentials give no values: %v", err)
		}
	})
}

func FuzzParseBucketInfo(f *testing.F) {
	f.Add([]byte(`{"spec":{"bucketName":"bucket-1","secretS3":{"endpoint":"https://s3.example.org","accessKeyID":"AK","accessSecretKey":"SK"}}}`))
	f.Add([]byte(`{"spec":{"bucketName":7}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := parseBucketInfo("s", data)
		if err != nil && !errors.Is(err, ErrInvalidSecret) {
			t.Fatalf("untyped error: %v", err)
		}
	})
}
