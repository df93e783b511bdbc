// Package tenanttest holds fixtures of the tenant model for tests: values
// that exercise every field, so that a round trip through YAML, the API or
// another package shows what is lost. It needs no cluster.
package tenanttest
