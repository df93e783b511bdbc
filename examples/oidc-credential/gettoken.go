package main

import (
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/oidc/credential"
)

// signIn is what get-token and logout share: the credential Config and
// how the browser is opened.
type signIn struct {
	cfg            credential.Config
	openBrowser    bool
	browserCommand string
	verbose        bool
}

func (s *signIn) addFlags(cmd *cobra.Command) {
	s.cfg.AddFlags(cmd.Flags())
	f := cmd.Flags()
	f.BoolVar(&s.openBrowser, "open-browser", false, "open the sign-in URL in the default browser (default: only print it)")
	f.StringVar(&s.browserCommand, "browser-command", "", "program that opens the sign-in URL, given as its last argument (implies --open-browser)")
	f.BoolVarP(&s.verbose, "verbose", "v", false, "log what happens to stderr (never a token)")
}

// check refuses flag values the sign-in could not use (ExitUsage), before
// the issuer is contacted.
func (s *signIn) check() error {
	switch {
	case s.cfg.IssuerURL == "" || s.cfg.ClientID == "":
		return cli.Usage("--issuer-url and --client-id are required")
	case s.cfg.SignInTimeout < 0:
		return cli.Usage("--sign-in-timeout %s is negative", s.cfg.SignInTimeout)
	case s.cfg.MaxFailedSignIns < 0:
		return cli.Usage("--max-failed-sign-ins %d is negative", s.cfg.MaxFailedSignIns)
	}
	for _, p := range s.cfg.RedirectPorts {
		if p < 0 || p > 65535 { // 0: any free port
			return cli.Usage("--redirect-port %d is no TCP port", p)
		}
	}
	if len(s.cfg.CertificateAuthority) > 0 && !x509.NewCertPool().AppendCertsFromPEM(s.cfg.CertificateAuthority) {
		return cli.Usage("--certificate-authority-data holds no PEM certificate")
	}
	return cli.CheckHTTPSURL("--issuer-url", s.cfg.IssuerURL)
}

// config completes the Config from the flags; messages go to stderr.
func (s *signIn) config(stderr io.Writer) credential.Config {
	cfg := s.cfg
	cfg.Prompt = stderr
	cfg.Logger = slog.New(slog.DiscardHandler)
	if s.verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	switch {
	case s.browserCommand != "":
		cfg.Browser = credential.CommandBrowser(s.browserCommand)
	case s.openBrowser && runtime.GOOS == "darwin":
		cfg.Browser = credential.CommandBrowser("open")
	case s.openBrowser:
		cfg.Browser = credential.CommandBrowser("xdg-open")
	}
	return cfg
}

func getTokenCommand(stdout, stderr io.Writer) *cobra.Command {
	s := &signIn{}
	cmd := &cobra.Command{
		Use:   "get-token",
		Short: "Print the cluster's ExecCredential (run by kubectl from the kubeconfig's exec block)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info, err := credential.ReadExecInfo()
			if err != nil {
				return exitCode(err)
			}
			if err := s.check(); err != nil {
				return err
			}
			cfg := s.config(stderr)
			if info != nil && !info.Spec.Interactive && !s.openBrowser && s.browserCommand == "" {
				// kubectl runs us with no terminal (a script, a CI job, an
				// IDE) and no browser is opened, so nobody would see the
				// sign-in URL: a token from the cache or a refresh, or fail
				// fast. With --open-browser or --browser-command the sign-in
				// needs no terminal and goes ahead.
				cfg.NonInteractive = true
			}
			tok, err := credential.Get(cmd.Context(), cfg)
			if err != nil {
				return exitCode(err)
			}
			cfg.Logger.Info("token ready", "source", tok.Source, "expiry", tok.Expiry)
			return credential.WriteExecCredential(stdout, tok)
		},
	}
	s.addFlags(cmd)
	return cmd
}

func logoutCommand(stdout, stderr io.Writer) *cobra.Command {
	s := &signIn{}
	cmd := &cobra.Command{
		Use:   "logout",
		Short: "Remove the cached tokens and revoke the refresh token where the issuer offers revocation",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := s.check(); err != nil {
				return err
			}
			res, err := credential.Logout(cmd.Context(), s.config(stderr))
			var what []string
			if res.Removed {
				what = append(what, "removed the cached tokens")
			} else {
				what = append(what, "no cached tokens")
			}
			switch {
			case res.Revoked:
				what = append(what, "revoked the refresh token at the issuer")
			case res.RefreshToken && !res.RevocationOffered && err == nil:
				what = append(what, "the issuer offers no revocation: its refresh token stays valid there until it expires")
			}
			fmt.Fprintln(stdout, strings.Join(what, "; "))
			return exitCode(err)
		},
	}
	s.addFlags(cmd)
	return cmd
}
