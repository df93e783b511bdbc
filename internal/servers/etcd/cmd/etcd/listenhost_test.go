package main

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestListenURLs(t *testing.T) {
	tests := []struct {
		name, in, host, want string
	}{
		{"unspecified v4", "http://0.0.0.0:2379", "127.40.1.1", "http://127.40.1.1:2379"},
		{"unspecified v6", "https://[::]:2380", "127.40.1.1", "https://127.40.1.1:2380"},
		{"empty host", "http://:2381", "127.40.1.1", "http://127.40.1.1:2381"},
		{"localhost", "http://LocalHost:2379/x", "127.40.1.1", "http://127.40.1.1:2379/x"},
		{"no port", "http://0.0.0.0", "127.40.1.1", "http://127.40.1.1"},
		{"v6 host", "http://[::]:2379", "::1", "http://[::1]:2379"},
		{"v6 host without port", "http://localhost", "::1", "http://[::1]"},
		{"a list", "https://0.0.0.0:2379,https://10.0.0.1:2379,http://localhost:4001", "127.40.1.1",
			"https://127.40.1.1:2379,https://10.0.0.1:2379,http://127.40.1.1:4001"},
		{"a specific address is kept", "http://127.0.0.1:2379", "127.40.1.1", "http://127.0.0.1:2379"},
		{"a name is kept", "http://etcd-0.etcd-headless.ns.svc:2380", "127.40.1.1", "http://etcd-0.etcd-headless.ns.svc:2380"},
		{"unix sockets are kept", "unix://localhost:2379", "127.40.1.1", "unix://localhost:2379"},
		{"no scheme is kept", "0.0.0.0:2379", "127.40.1.1", "0.0.0.0:2379"},
		{"garbage is kept", "http://[::", "127.40.1.1", "http://[::"},
		{"empty", "", "127.40.1.1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, listenURLs(tt.in, tt.host))
		})
	}
}

func TestListenArgs(t *testing.T) {
	const h = "127.40.1.1"
	tests := []struct {
		name     string
		in, want []string
	}{
		{"flag=value",
			[]string{"etcd", "--listen-client-urls=http://0.0.0.0:2379", "--name=etcd-0"},
			[]string{"etcd", "--listen-client-urls=http://127.40.1.1:2379", "--name=etcd-0"}},
		{"flag value with one dash",
			[]string{"etcd", "-listen-peer-urls", "http://0.0.0.0:2380", "--listen-metrics-urls", "http://:8080"},
			[]string{"etcd", "-listen-peer-urls", "http://127.40.1.1:2380", "--listen-metrics-urls", "http://127.40.1.1:8080"}},
		{"other flags are kept",
			[]string{"etcd", "--advertise-client-urls=http://localhost:2379", "--initial-cluster", "a=http://0.0.0.0:2380"},
			[]string{"etcd", "--advertise-client-urls=http://localhost:2379", "--initial-cluster", "a=http://0.0.0.0:2380"}},
		{"a flag without a value",
			[]string{"etcd", "--listen-client-urls"},
			[]string{"etcd", "--listen-client-urls"}},
		{"after --",
			[]string{"etcd", "--", "--listen-client-urls=http://0.0.0.0:2379"},
			[]string{"etcd", "--", "--listen-client-urls=http://0.0.0.0:2379"}},
		{"the program name is kept",
			[]string{"--listen-client-urls=http://0.0.0.0:2379"},
			[]string{"--listen-client-urls=http://0.0.0.0:2379"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]string(nil), tt.in...)
			require.Equal(t, tt.want, listenArgs(in, h))
			require.Equal(t, tt.in, in, "the input is not changed")
		})
	}
}

// FuzzListenHost checks that rewriting a listen URL list never panics,
// keeps the number of URLs, is idempotent, and that every URL it changes
// keeps its scheme and port and gets the listen host.
func FuzzListenHost(f *testing.F) {
	for _, s := range []string{"http://0.0.0.0:2379", "https://[::]:2380,http://localhost:4001/p?q", "http://:1", "unix://localhost:1", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, host := range []string{"127.40.1.1", "::1"} {
			out := listenURLs(in, host)
			require.Equal(t, out, listenURLs(out, host), "idempotent")
			ins, outs := strings.Split(in, ","), strings.Split(out, ",")
			require.Len(t, outs, len(ins))
			for i := range ins {
				if ins[i] == outs[i] {
					continue
				}
				u, err := url.Parse(ins[i])
				require.NoError(t, err)
				v, err := url.Parse(outs[i])
				require.NoError(t, err)
				require.Equal(t, u.Scheme, v.Scheme)
				require.Equal(t, u.Port(), v.Port())
				require.Equal(t, host, v.Hostname())
			}
		}
	})
}
