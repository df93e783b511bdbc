package backuptest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// FaultKind is a kind of injected failure.
type FaultKind int

const (
	// Status answers with an S3 error status (Fault.Status, default 503)
	// without reaching the server.
	Status FaultKind = iota
	// Reset closes the connection before answering.
	Reset
	// Truncate forwards the request but cuts the response body off after
	// Fault.After bytes and drops the connection.
	Truncate
	// Slow waits Fault.Delay before forwarding (or until the client gives
	// up).
	Slow
)

// Fault describes failures to inject into matching requests.
type Fault struct {
	// Kind is what happens.
	Kind FaultKind
	// Method and PathSuffix select requests ("" matches any).
	Method, PathSuffix string
	// Times is how many matching requests fail; negative means all.
	// Zero means one.
	Times int
	// Status is the HTTP status for Status faults. Default 503.
	Status int
	// After is the number of body bytes a Truncate fault lets through.
	After int64
	// Delay is how long a Slow fault waits.
	Delay time.Duration
}

// FaultProxy is an HTTPS reverse proxy in front of an S3 server that fails
// requests on demand. It keeps the client's Host header, so SigV4
// signatures made for the proxy's address stay valid.
type FaultProxy struct {
	// URL is the proxy's https URL.
	URL string
	// CertPEM is the proxy's serving certificate, to trust in clients.
	CertPEM []byte

	srv      *httptest.Server
	upstream *http.Client
	target   string

	mu       sync.Mutex
	faults   []*Fault
	requests []string
	injected int
}

// NewFaultProxy starts a proxy in front of upstreamURL, trusting
// upstreamCAPEM for the upstream connection. Close stops it.
func NewFaultProxy(upstreamURL string, upstreamCAPEM []byte) (*FaultProxy, error) {
	pool := x509.NewCertPool()
	if len(upstreamCAPEM) > 0 && !pool.AppendCertsFromPEM(upstreamCAPEM) {
		return nil, errors.New("backuptest: upstream CA holds no certificate")
	}
	p := &FaultProxy{
		target:   strings.TrimSuffix(upstreamURL, "/"),
		upstream: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}},
	}
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(p.serve))
	p.srv.StartTLS()
	p.URL = p.srv.URL
	p.CertPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	return p, nil
}

// NewFaultProxyT is NewFaultProxy for tests: it fails t on error and closes
// the proxy in t.Cleanup.
func NewFaultProxyT(t testing.TB, upstreamURL string, upstreamCAPEM []byte) *FaultProxy {
	t.Helper()
	p, err := NewFaultProxy(upstreamURL, upstreamCAPEM)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// Close stops the proxy.
func (p *FaultProxy) Close() { p.srv.Close() }

// Inject adds a fault. Faults are tried in the order added.
func (p *FaultProxy) Inject(f Fault) {
	if f.Times == 0 {
		f.Times = 1
	}
	if f.Status == 0 {
		f.Status = http.StatusServiceUnavailable
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = append(p.faults, &f)
}

// Clear removes every fault not used up yet.
func (p *FaultProxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = nil
}

// Requests returns "METHOD path" (plus " range" for Range requests) for
// every request seen, in order.
func (p *FaultProxy) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

// Injected returns how many requests were failed on purpose.
func (p *FaultProxy) Injected() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.injected
}

func (p *FaultProxy) match(r *http.Request) *Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	desc := r.Method + " " + r.URL.Path
	if rg := r.Header.Get("Range"); rg != "" {
		desc += " " + rg
	}
	p.requests = append(p.requests, desc)
	for _, f := range p.faults {
		if f.Times == 0 || f.Method != "" && f.Method != r.Method || !strings.HasSuffix(r.URL.Path, f.PathSuffix) {
			continue
		}
		if f.Times > 0 {
			f.Times--
		}
		p.injected++
		return f
	}
	return nil
}

func (p *FaultProxy) serve(w http.ResponseWriter, r *http.Request) {
	f := p.match(r)
	if f != nil {
		switch f.Kind {
		case Status:
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(f.Status)
			fmt.Fprintf(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>ServiceUnavailable</Code><Message>injected by backuptest</Message></Error>")
			return
		case Reset:
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					if tc, ok := conn.(interface{ NetConn() net.Conn }); ok {
						if tcp, ok := tc.NetConn().(*net.TCPConn); ok {
							_ = tcp.SetLinger(0) // RST instead of FIN
						}
					}
					conn.Close()
					return
				}
			}
			panic(http.ErrAbortHandler)
		case Slow:
			select {
			case <-time.After(f.Delay):
			case <-r.Context().Done():
				return
			}
		}
	}
	p.forward(w, r, f)
}

func (p *FaultProxy) forward(w http.ResponseWriter, r *http.Request, f *Fault) {
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	out.Host = r.Host
	out.ContentLength = r.ContentLength
	resp, err := p.upstream.Do(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	if f != nil && f.Kind == Truncate {
		_, _ = io.CopyN(w, resp.Body, f.After)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		panic(http.ErrAbortHandler) // drop the connection mid-body
	}
	_, _ = io.Copy(w, resp.Body)
}
