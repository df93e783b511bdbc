// Package peerurl compares etcd peer and client URLs: the one rule that
// both the relocator (package etcdrelocate) and the local environment's
// etcd use to match members, which are matched by URL, never by name.
package peerurl

import (
	"net"
	"net/url"
	"strings"
)

// Normalize returns the canonical form of a peer or client URL for
// comparison: lower-case scheme and host, no trailing dot, the
// cluster-domain suffix after ".svc" dropped, the scheme's default port
// made explicit, no path. A string that is not a URL with a host is only
// trimmed and lower-cased.
func Normalize(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return strings.ToLower(strings.TrimSpace(raw))
	}
	host, port := u.Hostname(), u.Port()
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if i := strings.Index(host, ".svc."); i >= 0 {
		host = host[:i+len(".svc")]
	}
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(host, port)
}

// Same reports whether two URLs name the same endpoint after Normalize.
func Same(a, b string) bool { return Normalize(a) == Normalize(b) }
