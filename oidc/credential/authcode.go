package credential

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// callback is what the loopback redirect brought back.
type callback struct {
	code string
	err  error
}

// authCode signs in with the authorization code grant and PKCE S256:
// it listens on the first free redirect port on 127.0.0.1, prints (and,
// when asked, opens) the authorization URL, waits for the browser's
// redirect to http://localhost:<port> and exchanges the code.
func (i *issuer) authCode(ctx context.Context) (*oauth2.Token, string, error) {
	l, port, err := listenLoopback(i.cfg.RedirectPorts)
	if err != nil {
		return nil, "", err
	}
	oc := *i.oauth
	oc.RedirectURL = "http://localhost:" + strconv.Itoa(port)
	state, nonce, verifier := random(), random(), oauth2.GenerateVerifier()
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier), gooidc.Nonce(nonce)}
	for k, v := range i.cfg.ExtraParams {
		opts = append(opts, oauth2.SetAuthURLParam(k, v))
	}
	authURL := oc.AuthCodeURL(state, opts...)

	done := make(chan callback, 1)
	srv := &http.Server{Handler: callbackHandler(state, done), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()

	fmt.Fprintf(i.cfg.Prompt, "Sign in to %s (client %s) in a browser:\n\n  %s\n\n", i.cfg.IssuerURL, i.cfg.ClientID, authURL)
	i.open(authURL)
	var cb callback
	select {
	case cb = <-done:
	case <-ctx.Done():
		return nil, "", fmt.Errorf("%w: waiting for the browser's redirect to %s: %v", ErrInterrupted, oc.RedirectURL, context.Cause(ctx))
	}
	if cb.err != nil {
		return nil, "", cb.err
	}
	tok, err := oc.Exchange(i.context(ctx), cb.code, oauth2.VerifierOption(verifier))
	if err != nil {
		return nil, "", i.tokenError("token", err)
	}
	return tok, nonce, nil
}

// callbackHandler answers the browser's redirect: the first request with
// the right state ends the wait; any other is refused.
func callbackHandler(state string, done chan<- callback) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("state") != state {
			http.Error(w, "unexpected request: wrong or missing state", http.StatusBadRequest)
			return
		}
		var cb callback
		switch {
		case q.Get("error") != "":
			cb.err = &SignInError{Code: q.Get("error"), Description: q.Get("error_description")}
		case q.Get("code") == "":
			cb.err = &SignInError{Code: "invalid_request", Description: "redirect without a code"}
		default:
			cb.code = q.Get("code")
		}
		select {
		case done <- cb:
		default:
			http.Error(w, "sign-in already finished", http.StatusConflict)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if cb.err != nil {
			fmt.Fprint(w, "<!doctype html><title>Sign-in failed</title><p>Sign-in failed; see the terminal.")
			return
		}
		fmt.Fprint(w, "<!doctype html><title>Signed in</title><p>Signed in. You can close this window.")
	})
}

// listenLoopback binds the first free port of ports on 127.0.0.1.
func listenLoopback(ports []int) (net.Listener, int, error) {
	if len(ports) == 0 {
		return nil, 0, invalidf("no redirect ports")
	}
	var last error
	for _, p := range ports {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err == nil {
			return l, l.Addr().(*net.TCPAddr).Port, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return nil, 0, fmt.Errorf("listen on loopback port %d: %w", p, err)
		}
		last = err
	}
	return nil, 0, &PortError{Ports: ports, Err: last}
}

// open hands url to the configured browser, if any; a failure is
// printed, the URL stays valid.
func (i *issuer) open(url string) {
	if i.cfg.Browser == nil {
		return
	}
	if err := i.cfg.Browser(url); err != nil {
		fmt.Fprintf(i.cfg.Prompt, "Could not open a browser (%v); open the URL above yourself.\n", err)
	}
}

func random() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
