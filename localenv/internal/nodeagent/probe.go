package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/cozystack/tenantkit/internal/process"
)

// runProbes runs a container's startup, readiness and liveness probes, the
// way the kubelet does, until ctx ends (the process exited or was stopped).
// A failed startup or liveness probe stops the process, so the restart
// policy applies.
func (w *podWorker) runProbes(ctx context.Context, spec corev1.Container, c *container, p *process.Process) {
	ip := w.podIP()
	if sp := spec.StartupProbe; sp != nil {
		if !w.probeLoop(ctx, spec, sp, ip, func(bool) bool { return false }, false) {
			if ctx.Err() == nil {
				w.agent.log.Info("startup probe failed, killing container", "pod", w.key(), "container", spec.Name)
				_ = p.Stop()
			}
			return
		}
	}
	w.update(c, p, func() { c.started = true })
	if rp := spec.ReadinessProbe; rp != nil {
		go w.probeLoop(ctx, spec, rp, ip, func(ok bool) bool {
			w.update(c, p, func() { c.ready = ok })
			return true
		}, false)
	} else {
		w.update(c, p, func() { c.ready = true })
	}
	if lp := spec.LivenessProbe; lp != nil {
		if !w.probeLoop(ctx, spec, lp, ip, func(ok bool) bool { return ok }, true) && ctx.Err() == nil {
			w.agent.log.Info("liveness probe failed, killing container", "pod", w.key(), "container", spec.Name)
			_ = p.Stop()
		}
	}
}

// probeLoop probes every period. After successThreshold consecutive
// successes or failureThreshold consecutive failures it calls result with
// the outcome; it keeps probing while result returns true. It returns false
// when it stopped on a failure (or ctx ended), true on a success. Liveness
// probes keep the spec's timing even with MaxProbePeriod: they kill, and a
// loaded test machine must not make them kill healthy members.
func (w *podWorker) probeLoop(ctx context.Context, spec corev1.Container, pr *corev1.Probe, ip netip.Addr, result func(ok bool) bool, liveness bool) bool {
	period, delay := seconds(pr.PeriodSeconds, 10), seconds(pr.InitialDelaySeconds, 0)
	if !liveness {
		period, delay = w.capPeriod(period), w.capPeriod(delay)
	}
	timeout := seconds(pr.TimeoutSeconds, 1)
	failureThreshold, successThreshold := threshold(pr.FailureThreshold, 3), threshold(pr.SuccessThreshold, 1)
	var successes, failures int
	last := -1 // unknown
	for {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(delay):
		}
		delay = period
		pctx, cancel := context.WithTimeout(ctx, timeout)
		err := w.probeOnce(pctx, pr, spec, ip)
		cancel()
		if ctx.Err() != nil {
			return false
		}
		if err == nil {
			successes, failures = successes+1, 0
		} else {
			successes, failures = 0, failures+1
		}
		var outcome int
		switch {
		case successes >= successThreshold:
			outcome = 1
		case failures >= failureThreshold:
			outcome = 0
		default:
			continue
		}
		if outcome == last {
			continue
		}
		last = outcome
		if !result(outcome == 1) {
			return outcome == 1
		}
	}
}

func (w *podWorker) capPeriod(d time.Duration) time.Duration {
	if m := w.agent.cfg.MaxProbePeriod; m > 0 && d > m {
		return m
	}
	return d
}

func seconds(v int32, def int) time.Duration {
	if v <= 0 {
		return time.Duration(def) * time.Second
	}
	return time.Duration(v) * time.Second
}

func threshold(v int32, def int) int {
	if v <= 0 {
		return def
	}
	return int(v)
}

// update changes a container's probe state if p is still its process, and
// wakes the worker to report it.
func (w *podWorker) update(c *container, p *process.Process, f func()) {
	w.mu.Lock()
	current := c.proc == p
	if current {
		f()
	}
	w.mu.Unlock()
	if current {
		w.wake()
	}
}

// probeOnce runs one probe against the pod IP. HTTP and TCP probes are
// real; gRPC probes only check that the port accepts connections; exec
// probes cannot run in a simulated container and always succeed.
func (w *podWorker) probeOnce(ctx context.Context, pr *corev1.Probe, spec corev1.Container, ip netip.Addr) error {
	switch {
	case pr.HTTPGet != nil:
		g := pr.HTTPGet
		port, err := resolvePort(g.Port, spec)
		if err != nil {
			return err
		}
		host := ip.String()
		if g.Host != "" {
			host = g.Host
		}
		scheme := strings.ToLower(string(g.Scheme))
		if scheme == "" {
			scheme = "http"
		}
		p := g.Path
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+net.JoinHostPort(host, strconv.Itoa(port))+p, nil)
		if err != nil {
			return err
		}
		for _, h := range g.HTTPHeaders {
			req.Header.Add(h.Name, h.Value)
		}
		resp, err := w.agent.probe.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("HTTP probe %s: %s", p, resp.Status)
		}
		return nil
	case pr.TCPSocket != nil || pr.GRPC != nil:
		var port int
		var err error
		if pr.TCPSocket != nil {
			port, err = resolvePort(pr.TCPSocket.Port, spec)
		} else {
			port = int(pr.GRPC.Port)
		}
		if err != nil {
			return err
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ip.String(), strconv.Itoa(port)))
		if err != nil {
			return err
		}
		return conn.Close()
	}
	return nil
}

func resolvePort(p intstr.IntOrString, spec corev1.Container) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	for _, cp := range spec.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, errors.New("probe port " + p.StrVal + " is not a container port")
}
