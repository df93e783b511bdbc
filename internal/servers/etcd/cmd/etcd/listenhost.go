package main

import (
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// listenFlags are the etcd flags whose URLs listenHost rewrites, without
// dashes; listenEnv the environment variables etcd reads for them.
var (
	listenFlags = []string{"listen-client-urls", "listen-client-http-urls", "listen-peer-urls", "listen-metrics-urls"}
	listenEnv   = []string{"ETCD_LISTEN_CLIENT_URLS", "ETCD_LISTEN_CLIENT_HTTP_URLS", "ETCD_LISTEN_PEER_URLS", "ETCD_LISTEN_METRICS_URLS"}
)

// listenArgs returns args with the URLs of the listen flags rewritten by
// listenURLs, in both forms Go's flag package accepts ("--flag=value" and
// "--flag value", with one dash or two). Parsing stops at "--", as etcd's
// does; args[0], the program name, is kept.
func listenArgs(args []string, host string) []string {
	out := slices.Clone(args)
	for i := 1; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if !strings.HasPrefix(a, "-") || !slices.Contains(listenFlags, name) {
			continue
		}
		if hasValue {
			out[i] = a[:len(a)-len(value)] + listenURLs(value, host)
		} else if i+1 < len(out) {
			i++
			out[i] = listenURLs(out[i], host)
		}
	}
	return out
}

// listenURLs rewrites a comma-separated list of listen URLs: each one whose
// host is unspecified (0.0.0.0, [::]), empty or localhost gets host instead,
// keeping its scheme, port and path. Other URLs, unix sockets (whose host
// part names the socket file) and what does not parse as a URL are kept as
// they are, for etcd to judge.
func listenURLs(list, host string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		parts[i] = listenURL(p, host)
	}
	return strings.Join(parts, ",")
}

func listenURL(s, host string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Scheme == "unix" || u.Scheme == "unixs" ||
		!strings.HasPrefix(strings.ToLower(s), u.Scheme+"://") {
		return s
	}
	h := u.Hostname()
	if a, err := netip.ParseAddr(h); h != "" && !strings.EqualFold(h, "localhost") && (err != nil || !a.IsUnspecified()) {
		return s
	}
	if p := u.Port(); p != "" {
		u.Host = net.JoinHostPort(host, p)
	} else if strings.Contains(host, ":") {
		u.Host = "[" + host + "]"
	} else {
		u.Host = host
	}
	return u.String()
}
