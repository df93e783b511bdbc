// Package portforward dials a pod's port through the Kubernetes API's
// port-forward subresource, as kubectl port-forward does: the one
// implementation behind etcdrelocate.PortForwardDialer and the test
// environment's clients of tenant etcds on clusters whose pod network the
// host cannot reach (kind).
package portforward

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	//lint:ignore SA1019 client-go's SPDY dialer returns this package's types
	"k8s.io/apimachinery/pkg/util/httpstream"
)

// DialFunc opens a connection to addr.
type DialFunc = func(ctx context.Context, addr string) (net.Conn, error)

// Dialer returns a DialFunc for cfg's cluster: each dial of
// <pod>.<service>.<namespace>.svc:<port> opens a port-forward stream to
// that pod and port.
func Dialer(cfg *rest.Config) (DialFunc, error) {
	if cfg == nil {
		return nil, errors.New("port-forward: nil *rest.Config")
	}
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("port-forward: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("port-forward: %w", err)
	}
	var ids atomic.Int64
	return func(ctx context.Context, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("port-forward to %s: %w", addr, err)
		}
		pod, ns, err := PodOfHost(host)
		if err != nil {
			return nil, fmt.Errorf("port-forward to %s: %w", addr, err)
		}
		u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("portforward").URL()
		d := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
		conn, _, err := d.Dial(portforward.PortForwardProtocolV1Name)
		if err != nil {
			return nil, fmt.Errorf("port-forward to pod %s/%s: %w", ns, pod, err)
		}
		return openStreams(conn, addr, port, strconv.FormatInt(ids.Add(1), 10), ns+"/"+pod)
	}, nil
}

// openStreams opens the error and data streams of one forwarded
// connection.
func openStreams(conn httpstream.Connection, addr, port, id, pod string) (net.Conn, error) {
	h := http.Header{}
	h.Set(corev1.StreamType, corev1.StreamTypeError)
	h.Set(corev1.PortHeader, port)
	h.Set(corev1.PortForwardRequestIDHeader, id)
	errStream, err := conn.CreateStream(h)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("port-forward to pod %s: %w", pod, err)
	}
	errStream.Close() // nothing to send; the server reports errors on it
	h.Set(corev1.StreamType, corev1.StreamTypeData)
	data, err := conn.CreateStream(h)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("port-forward to pod %s: %w", pod, err)
	}
	sc := &streamConn{stream: data, conn: conn, addr: addr}
	go sc.watchErrors(errStream)
	return sc, nil
}

// PodOfHost splits <pod>.<service>.<ns>.svc into pod and namespace.
func PodOfHost(host string) (pod, namespace string, err error) {
	parts := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(parts) < 4 || parts[3] != "svc" {
		return "", "", fmt.Errorf("%q is not a pod DNS name <pod>.<service>.<namespace>.svc", host)
	}
	return parts[0], parts[2], nil
}

// streamConn is a port-forward data stream as a net.Conn.
type streamConn struct {
	stream httpstream.Stream
	conn   httpstream.Connection
	addr   string
	closed atomic.Bool
}

func (c *streamConn) watchErrors(s httpstream.Stream) {
	msg, _ := io.ReadAll(s)
	if len(msg) > 0 {
		c.Close()
	}
}

func (c *streamConn) Read(p []byte) (int, error)  { return c.stream.Read(p) }
func (c *streamConn) Write(p []byte) (int, error) { return c.stream.Write(p) }

func (c *streamConn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.stream.Reset()
	return c.conn.Close()
}

func (c *streamConn) LocalAddr() net.Addr              { return pfAddr("port-forward") }
func (c *streamConn) RemoteAddr() net.Addr             { return pfAddr(c.addr) }
func (c *streamConn) SetDeadline(time.Time) error      { return nil }
func (c *streamConn) SetReadDeadline(time.Time) error  { return nil }
func (c *streamConn) SetWriteDeadline(time.Time) error { return nil }

type pfAddr string

func (a pfAddr) Network() string { return "port-forward" }
func (a pfAddr) String() string  { return string(a) }
