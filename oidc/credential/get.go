package credential

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/oauth2"
)

// Source says where Get found the token it returned.
type Source string

const (
	// SourceCache is a cached ID token, verified again.
	SourceCache Source = "cache"
	// SourceRefresh is a new ID token from the cached refresh token.
	SourceRefresh Source = "refresh"
	// SourceSignIn is a new ID token from a sign-in.
	SourceSignIn Source = "sign-in"
)

// Token is a verified ID token for the cluster's audience.
type Token struct {
	// IDToken is the raw JWT, the bearer token for the cluster. Never log
	// it.
	IDToken string
	// Expiry is the token's exp.
	Expiry time.Time
	// Subject is the token's sub.
	Subject string
	// Source is where it came from.
	Source Source
}

// Get returns a verified ID token for cfg's cluster: the cached one while
// it is valid, else one refreshed with the cached refresh token, else one
// from a new sign-in (cfg.Grant). One process at a time works on a
// configuration's cache entry (an inter-process lock), so concurrent
// calls for the same configuration cause at most one sign-in; the others
// wait and return its token. After cfg.MaxFailedSignIns failed sign-ins
// in a row, Get backs off ([ErrSignInBackoff]) instead of starting
// another.
func Get(ctx context.Context, cfg Config) (*Token, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	st, err := openStore(cfg.CacheDir)
	if err != nil {
		return nil, err
	}
	key := cfg.key()
	l, err := lock(ctx, st.lockPath(key))
	if err != nil {
		return nil, err
	}
	defer l.unlock()
	iss, err := discover(ctx, cfg)
	if err != nil {
		return nil, err
	}
	e, err := st.load(key)
	if err != nil {
		cfg.Logger.Info("ignoring the cache entry", "path", st.path(key), "reason", err)
	}
	if tok := iss.fromCache(ctx, e); tok != nil {
		return tok, nil
	}
	tok, refreshErr := iss.refresh(ctx, &e)
	if tok != nil {
		return tok, st.save(e)
	}
	if refreshErr != nil && !errors.Is(refreshErr, ErrRefreshRejected) && !errors.Is(refreshErr, ErrTokenInvalid) {
		return nil, refreshErr
	}
	tok, err = iss.signInCached(ctx, st, e)
	if err != nil && refreshErr != nil {
		return nil, errors.Join(refreshErr, err) // why a sign-in was needed, and why it failed
	}
	return tok, err
}

// fromCache returns the cached ID token if it still verifies.
func (i *issuer) fromCache(ctx context.Context, e entry) *Token {
	if e.IDToken == "" {
		return nil
	}
	id, err := i.verify(ctx, e.IDToken, "", false)
	if err != nil {
		i.cfg.Logger.Debug("cached ID token not used", "reason", err)
		return nil
	}
	return &Token{IDToken: e.IDToken, Expiry: id.Expiry, Subject: id.Subject, Source: SourceCache}
}

// refresh trades the cached refresh token for new tokens and updates e.
// No refresh token gives (nil, nil).
func (i *issuer) refresh(ctx context.Context, e *entry) (*Token, error) {
	if e.RefreshToken == "" {
		return nil, nil
	}
	ts := i.oauth.TokenSource(i.context(ctx), &oauth2.Token{RefreshToken: e.RefreshToken, Expiry: time.Unix(1, 0)})
	otok, err := ts.Token()
	if err != nil {
		err = i.tokenError("refresh", err)
		i.cfg.Logger.Info("refresh failed", "reason", err)
		return nil, err
	}
	tok, err := i.accept(ctx, otok, "", SourceRefresh)
	if err != nil {
		return nil, err
	}
	e.IDToken = tok.IDToken
	if otok.RefreshToken != "" {
		e.RefreshToken = otok.RefreshToken
	}
	return tok, nil
}

// accept verifies the ID token of a token response just received.
func (i *issuer) accept(ctx context.Context, otok *oauth2.Token, nonce string, src Source) (*Token, error) {
	raw, _ := otok.Extra("id_token").(string)
	if raw == "" {
		return nil, fmt.Errorf("%w: the issuer's %s response has no id_token (is openid among the scopes?)", ErrTokenInvalid, src)
	}
	id, err := i.verify(ctx, raw, nonce, true)
	if err != nil {
		return nil, err
	}
	return &Token{IDToken: raw, Expiry: id.Expiry, Subject: id.Subject, Source: src}, nil
}

// signInCached runs a sign-in unless backing off, and records its outcome
// in the cache: the tokens, or one more failure.
func (i *issuer) signInCached(ctx context.Context, st *store, e entry) (*Token, error) {
	if e.Failures >= i.cfg.MaxFailedSignIns {
		retry := e.LastFailure.Add(backoff(e.Failures - i.cfg.MaxFailedSignIns))
		if i.cfg.Now().Before(retry) {
			return nil, &BackoffError{Failures: e.Failures, RetryAfter: retry}
		}
	}
	if i.cfg.NonInteractive {
		return nil, fmt.Errorf("%w: no cached or refreshable token for client %s; sign in once from a terminal", ErrInteractionRequired, i.cfg.ClientID)
	}
	tok, refresh, err := i.signIn(ctx)
	if err != nil && ctx.Err() != nil {
		return nil, err // the caller gave up (Ctrl-C): not a failed sign-in
	}
	if err != nil {
		e.IDToken, e.RefreshToken = "", ""
		e.Failures++
		e.LastFailure = i.cfg.Now()
		if serr := st.save(e); serr != nil {
			err = errors.Join(err, serr)
		}
		return nil, err
	}
	e = entry{Key: e.Key, IDToken: tok.IDToken, RefreshToken: refresh}
	return tok, st.save(e)
}

// backoff is the wait after the n-th failure beyond the cap: 30 s,
// doubling, at most 15 minutes.
func backoff(n int) time.Duration {
	d := 30 * time.Second
	for ; n > 0 && d < 15*time.Minute; n-- {
		d *= 2
	}
	return min(d, 15*time.Minute)
}

// signIn runs the configured grant within SignInTimeout; running out of
// it is ErrSignInTimeout, the caller's cancellation ErrInterrupted.
func (i *issuer) signIn(parent context.Context) (*Token, string, error) {
	tok, refresh, err := i.signInWithin(parent)
	if errors.Is(err, ErrInterrupted) && parent.Err() == nil {
		return nil, "", fmt.Errorf("%w: not finished within %s", ErrSignInTimeout, i.cfg.SignInTimeout)
	}
	return tok, refresh, err
}

func (i *issuer) signInWithin(ctx context.Context) (*Token, string, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, i.cfg.SignInTimeout, fmt.Errorf("sign-in took longer than %s", i.cfg.SignInTimeout))
	defer cancel()
	i.cfg.Logger.Info("signing in", "issuer", i.cfg.IssuerURL, "client", i.cfg.ClientID, "grant", i.cfg.Grant)
	var (
		otok  *oauth2.Token
		nonce string
		err   error
	)
	if i.cfg.Grant == GrantDeviceCode {
		otok, err = i.deviceCode(ctx)
	} else {
		otok, nonce, err = i.authCode(ctx)
	}
	if err != nil {
		return nil, "", err
	}
	tok, err := i.accept(ctx, otok, nonce, SourceSignIn)
	if err != nil {
		return nil, "", err
	}
	return tok, otok.RefreshToken, nil
}
