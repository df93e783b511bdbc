package credential

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/oauth2"
)

// deviceCode signs in with the device authorization grant (RFC 8628) and
// PKCE S256: it prints the verification URL and the user code (opening
// the complete URL when asked) and polls the token endpoint until the
// user has signed in, the code expires or ctx ends.
func (i *issuer) deviceCode(ctx context.Context) (*oauth2.Token, error) {
	if i.oauth.Endpoint.DeviceAuthURL == "" {
		return nil, invalidf("issuer %s offers no device_authorization_endpoint", i.cfg.IssuerURL)
	}
	verifier := oauth2.GenerateVerifier()
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}
	for k, v := range i.cfg.ExtraParams {
		opts = append(opts, oauth2.SetAuthURLParam(k, v))
	}
	resp, err := i.oauth.DeviceAuth(i.context(ctx), opts...)
	if err != nil {
		return nil, i.tokenError("device authorization", err)
	}
	fmt.Fprintf(i.cfg.Prompt, "Sign in to %s (client %s): open\n\n  %s\n\nand enter the code %s\n\n",
		i.cfg.IssuerURL, i.cfg.ClientID, resp.VerificationURI, resp.UserCode)
	open := resp.VerificationURIComplete
	if open == "" {
		open = resp.VerificationURI
	}
	i.open(open)
	tok, err := i.oauth.DeviceAccessToken(i.context(ctx), resp, oauth2.VerifierOption(verifier))
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, fmt.Errorf("%w: waiting for the device sign-in: %v", ErrInterrupted, context.Cause(ctx))
		}
		return nil, i.tokenError("device token", err)
	}
	return tok, nil
}
