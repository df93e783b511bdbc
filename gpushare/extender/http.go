package extender

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

// Handler serves POST /filter, POST /prioritize and POST /bind as
// kube-scheduler calls them (urlPrefix plus filterVerb "filter",
// prioritizeVerb "prioritize", bindVerb "bind"), and GET /healthz. A body
// that cannot be decoded is answered 400 with the reason; a call before
// Watch has synced, 503.
func (x *Extender) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /filter", x.serveFilter)
	mux.HandleFunc("POST /prioritize", x.servePrioritize)
	mux.HandleFunc("POST /bind", x.serveBind)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !x.ready() {
			http.Error(w, ErrNotStarted.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	return mux
}

func (x *Extender) serveFilter(w http.ResponseWriter, r *http.Request) {
	if !x.readyOr503(w) {
		return
	}
	args, candidates, err := decodeArgs("filter", r.Body, x.cfg.MaxRequestBytes)
	if err != nil {
		x.badRequest(w, err)
		return
	}
	writeJSON(w, x.filter(args.Pod, candidates))
}

func (x *Extender) servePrioritize(w http.ResponseWriter, r *http.Request) {
	if !x.readyOr503(w) {
		return
	}
	args, candidates, err := decodeArgs("prioritize", r.Body, x.cfg.MaxRequestBytes)
	if err != nil {
		x.badRequest(w, err)
		return
	}
	list, err := x.prioritize(args.Pod, candidates)
	if err != nil {
		// kube-scheduler's prioritize has no error field: an error status
		// makes it ignore this extender's scores for the pod.
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}
	writeJSON(w, list)
}

func (x *Extender) serveBind(w http.ResponseWriter, r *http.Request) {
	if !x.readyOr503(w) {
		return
	}
	args, err := decodeBinding(r.Body, x.cfg.MaxRequestBytes)
	if err != nil {
		x.badRequest(w, err)
		return
	}
	res := &extenderv1.ExtenderBindingResult{}
	if err := x.bind(r.Context(), args); err != nil {
		x.cfg.Logger.Info("gpushare extender: bind refused", "pod", args.PodNamespace+"/"+args.PodName, "node", args.Node, "err", err)
		res.Error = err.Error()
	}
	writeJSON(w, res)
}

func (x *Extender) readyOr503(w http.ResponseWriter) bool {
	if x.ready() {
		return true
	}
	http.Error(w, ErrNotStarted.Error(), http.StatusServiceUnavailable)
	return false
}

func (x *Extender) badRequest(w http.ResponseWriter, err error) {
	x.cfg.Logger.Info("gpushare extender: bad request", "err", err)
	http.Error(w, err.Error(), http.StatusBadRequest)
}

func writeJSON(w http.ResponseWriter, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

// Start watches the cluster (Watch, unless it ran), then serves Handler on Config.Addr,
// with TLS when Config.CertFile and Config.KeyFile are set, until ctx is
// done. It returns the address it listens on once the ledger is synced.
func (x *Extender) Start(ctx context.Context) (net.Addr, error) {
	if err := x.Watch(ctx); err != nil {
		return nil, err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", x.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("extender: %w", err)
	}
	srv := &http.Server{Handler: x.Handler(), ReadHeaderTimeout: 10 * time.Second}
	if x.cfg.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(x.cfg.CertFile, x.cfg.KeyFile)
		if err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("extender: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			x.cfg.Logger.Error("gpushare extender: serve", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return ln.Addr(), nil
}
