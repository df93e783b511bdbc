package credential

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// LogoutResult says what Logout did.
type LogoutResult struct {
	// Removed is true when a cache entry existed and was removed.
	Removed bool
	// RefreshToken is true when the entry held a refresh token.
	RefreshToken bool
	// Revoked is true when the issuer accepted the revocation of the
	// cached refresh token (RFC 7009).
	Revoked bool
	// RevocationOffered is false when the issuer advertises no
	// revocation_endpoint, so the refresh token stays valid at the issuer
	// until it expires.
	RevocationOffered bool
}

// Logout forgets cfg's tokens: it revokes the cached refresh token at the
// issuer's revocation_endpoint (RFC 7009) when the issuer offers one,
// removes the cache entry and so resets the sign-in back-off. The entry
// is removed even when revocation fails; the error then says so.
func Logout(ctx context.Context, cfg Config) (LogoutResult, error) {
	var res LogoutResult
	cfg, err := cfg.withDefaults()
	if err != nil {
		return res, err
	}
	st, err := openStore(cfg.CacheDir)
	if err != nil {
		return res, err
	}
	key := cfg.key()
	l, err := lock(ctx, st.lockPath(key))
	if err != nil {
		return res, err
	}
	defer l.unlock()
	e, _ := st.load(key)
	var revokeErr error
	if e.RefreshToken != "" {
		res.RefreshToken = true
		iss, err := discover(ctx, cfg)
		switch {
		case err != nil:
			revokeErr = err
		case iss.revocation != "":
			res.RevocationOffered = true
			revokeErr = iss.revoke(ctx, e.RefreshToken)
			res.Revoked = revokeErr == nil
		}
	}
	res.Removed, err = st.remove(key)
	if err != nil {
		return res, fmt.Errorf("credential: remove cache entry: %w", err)
	}
	return res, revokeErr
}

// revoke asks the issuer to revoke a refresh token (RFC 7009 §2.1).
func (i *issuer) revoke(ctx context.Context, refreshToken string) error {
	form := url.Values{"token": {refreshToken}, "token_type_hint": {"refresh_token"}, "client_id": {i.cfg.ClientID}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, i.revocation, strings.NewReader(form.Encode()))
	if err != nil {
		return &IssuerError{URL: i.cfg.IssuerURL, Op: "revoke", Err: err} // a revocation URL that is no URL
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := i.cfg.HTTPClient.Do(req)
	if err != nil {
		return newIssuerError(i.cfg.IssuerURL, "revoke", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK {
		return &IssuerError{URL: i.cfg.IssuerURL, Op: "revoke", Answered: true, Err: fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))}
	}
	return nil
}
