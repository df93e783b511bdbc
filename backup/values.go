package backup

import (
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// defaultRegion is the region written into Velero's settings when none is
// given; S3-compatible stores such as SeaweedFS ignore it, but the AWS
// plugin needs one.
const defaultRegion = "us-east-1"

// DefaultLocationName is the name of the backup storage location the addon
// values define.
const DefaultLocationName = "default"

// ValuesOptions tunes AddonValues. The zero value renders exactly what the
// Cozystack "Backups with the Velero addon" guide shows.
type ValuesOptions struct {
	// Prefix is the folder inside the bucket that holds Velero's data.
	// Default: the bucket root. It must be a relative path without "." or
	// ".." segments; see ValidatePrefix.
	Prefix string
	// Region is the S3 region. Default "us-east-1" (S3-compatible stores
	// ignore it; Velero's AWS plugin needs one).
	Region string
	// LocationName names the backup storage location. Default
	// DefaultLocationName.
	LocationName string
	// CACertPEM, when set, is written as the location's caCert so that
	// Velero trusts an S3 endpoint with a private CA.
	CACertPEM []byte
}

// Values are the Velero addon values of a Cozystack Kubernetes cluster:
// spec.addons.velero.valuesOverride. Everything is nested under the
// "velero" key, as the addon chart wraps upstream Velero as a subchart
// (keys at the top level are silently ignored).
type Values struct {
	Velero VeleroValues `json:"velero"`
}

// VeleroValues are the upstream Velero chart values tenantkit sets.
type VeleroValues struct {
	Credentials   ChartCredentials   `json:"credentials"`
	Configuration ChartConfiguration `json:"configuration"`
}

// ChartCredentials is the chart's credentials section.
type ChartCredentials struct {
	UseSecret      bool              `json:"useSecret"`
	SecretContents map[string]string `json:"secretContents"`
}

// ChartConfiguration is the chart's configuration section.
type ChartConfiguration struct {
	BackupStorageLocation  []ChartLocation `json:"backupStorageLocation"`
	VolumeSnapshotLocation []ChartLocation `json:"volumeSnapshotLocation"`
}

// ChartLocation is one backup storage or volume snapshot location in the
// chart's values.
type ChartLocation struct {
	Name     string            `json:"name"`
	Provider string            `json:"provider"`
	Bucket   string            `json:"bucket,omitempty"`
	Prefix   string            `json:"prefix,omitempty"`
	CACert   string            `json:"caCert,omitempty"`
	Default  bool              `json:"default,omitempty"`
	Config   map[string]string `json:"config"`
}

// AddonValues builds the Velero addon values for a Bucket's credentials:
// the AWS credentials file as credentials.secretContents.cloud, one default
// backup storage location (provider aws, path-style, s3Url
// https://<endpoint>) and one volume snapshot location.
func AddonValues(c Credentials, opts ValuesOptions) (Values, error) {
	if c.Bucket == "" || c.Endpoint == "" || c.AccessKeyID == "" || c.SecretAccessKey == "" {
		return Values{}, fmt.Errorf("%w: credentials need a bucket, an endpoint and both keys", ErrInvalidConfig)
	}
	if err := ValidatePrefix(opts.Prefix); err != nil {
		return Values{}, err
	}
	if opts.Region == "" {
		opts.Region = defaultRegion
	}
	if opts.LocationName == "" {
		opts.LocationName = DefaultLocationName
	}
	cfg := locationConfig(c, opts.Region)
	return Values{Velero: VeleroValues{
		Credentials: ChartCredentials{
			UseSecret:      true,
			SecretContents: map[string]string{"cloud": credentialsFile(c)},
		},
		Configuration: ChartConfiguration{
			BackupStorageLocation: []ChartLocation{{
				Name: opts.LocationName, Provider: "aws", Bucket: c.Bucket, Prefix: opts.Prefix,
				CACert: string(opts.CACertPEM), Default: true, Config: cfg,
			}},
			VolumeSnapshotLocation: []ChartLocation{{
				Name: opts.LocationName, Provider: "aws", Config: map[string]string{"region": opts.Region},
			}},
		},
	}}, nil
}

// locationConfig returns the AWS plugin's BackupStorageLocation config for
// the credentials: region, s3ForcePathStyle "true" and s3Url.
func locationConfig(c Credentials, region string) map[string]string {
	if region == "" {
		region = defaultRegion
	}
	return map[string]string{"region": region, "s3ForcePathStyle": "true", "s3Url": c.url()}
}

// credentialsFile returns the AWS shared credentials file (INI) Velero's AWS
// plugin reads: a [default] profile with the access and secret keys.
func credentialsFile(c Credentials) string {
	return fmt.Sprintf("[default]\naws_access_key_id=%s\naws_secret_access_key=%s\n", c.AccessKeyID, c.SecretAccessKey)
}

// YAML renders the values as YAML, ready for valuesOverride.
func (v Values) YAML() ([]byte, error) { return yaml.Marshal(v) }

// Override returns the values as the map a Kubernetes application's
// spec.addons.velero.valuesOverride holds (package tenant's Addon), with
// Helm's types: strings, booleans, lists and maps.
func (v Values) Override() (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("backup: encode values: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("backup: encode values: %w", err)
	}
	return m, nil
}

// String renders the values without the secret key, for logs.
func (v Values) String() string {
	c := v
	c.Velero.Credentials.SecretContents = map[string]string{"cloud": "<redacted>"}
	out, err := yaml.Marshal(c)
	if err != nil {
		return "<unrenderable values>"
	}
	return strings.TrimSpace(string(out))
}
