// Command dex is the dex OpenID Connect provider (github.com/dexidp/dex,
// v2.45.1 pinned by pseudo-version) for tenantkit's local environment.
//
// Upstream's cmd/dex is a main package and cannot be imported, so this
// program embeds dex's server package directly, the way dex's own tests do:
// in-memory storage, static clients, static passwords and static connectors,
// served over HTTPS. It reads a subset of dex's own configuration file
// format (JSON is YAML, so the file is also a valid dex config), with one
// addition for tests: a static password may carry "password" (plain text,
// hashed with bcrypt at start) instead of "hash".
//
//	dex serve config.json
//	dex version
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/dexidp/dex/server"
	"github.com/dexidp/dex/server/signer"
	"github.com/dexidp/dex/storage"
	"github.com/dexidp/dex/storage/memory"
	"golang.org/x/crypto/bcrypt"
)

// version is the upstream dex release this module pins.
const version = "v2.45.1"

func main() {
	if len(os.Args) == 2 && (os.Args[1] == "version" || os.Args[1] == "--version") {
		fmt.Println("dex", version)
		return
	}
	if len(os.Args) != 3 || os.Args[1] != "serve" {
		fmt.Fprintln(os.Stderr, "usage: dex serve <config.json> | dex version")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "dex:", err)
		os.Exit(1)
	}
}

// config is the subset of dex's configuration file this program honours.
type config struct {
	Issuer string `json:"issuer"`
	Web    struct {
		HTTPS   string `json:"https"`
		TLSCert string `json:"tlsCert"`
		TLSKey  string `json:"tlsKey"`
	} `json:"web"`
	OAuth2 struct {
		SkipApprovalScreen bool     `json:"skipApprovalScreen"`
		PasswordConnector  string   `json:"passwordConnector"`
		GrantTypes         []string `json:"grantTypes"`
		ResponseTypes      []string `json:"responseTypes"`
	} `json:"oauth2"`
	Expiry struct {
		IDTokens    string `json:"idTokens"`
		SigningKeys string `json:"signingKeys"`
	} `json:"expiry"`
	EnablePasswordDB bool             `json:"enablePasswordDB"`
	StaticClients    []storage.Client `json:"staticClients"`
	StaticPasswords  []password       `json:"staticPasswords"`
	Connectors       []connector      `json:"connectors"`
}

type password struct {
	Email         string   `json:"email"`
	Hash          string   `json:"hash"`
	Password      string   `json:"password"`
	Username      string   `json:"username"`
	UserID        string   `json:"userID"`
	Groups        []string `json:"groups"`
	EmailVerified *bool    `json:"emailVerified"`
}

type connector struct {
	Type   string          `json:"type"`
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Config json.RawMessage `json:"config"`
}

func serve(ctx context.Context, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var c config
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	st, err := newStorage(c, logger)
	if err != nil {
		return err
	}
	idTTL := 24 * time.Hour
	if c.Expiry.IDTokens != "" {
		if idTTL, err = time.ParseDuration(c.Expiry.IDTokens); err != nil {
			return fmt.Errorf("expiry.idTokens: %w", err)
		}
	}
	rotation := c.Expiry.SigningKeys
	if rotation == "" {
		rotation = "6h"
	}
	sig, err := (&signer.LocalConfig{KeysRotationPeriod: rotation}).Open(ctx, st, idTTL, time.Now, logger)
	if err != nil {
		return fmt.Errorf("open signer: %w", err)
	}
	refresh, err := server.NewRefreshTokenPolicy(logger, true, "", "", "")
	if err != nil {
		return err
	}
	srv, err := server.NewServer(ctx, server.Config{
		Issuer:                 c.Issuer,
		Storage:                st,
		AllowedGrantTypes:      c.OAuth2.GrantTypes,
		SupportedResponseTypes: c.OAuth2.ResponseTypes,
		SkipApprovalScreen:     c.OAuth2.SkipApprovalScreen,
		PasswordConnector:      c.OAuth2.PasswordConnector,
		IDTokensValidFor:       idTTL,
		RefreshTokenPolicy:     refresh,
		Logger:                 logger,
		Signer:                 sig,
	})
	if err != nil {
		return fmt.Errorf("new server: %w", err)
	}
	return listen(ctx, c, srv, logger)
}

func newStorage(c config, logger *slog.Logger) (storage.Storage, error) {
	st := memory.New(logger)
	st = storage.WithStaticClients(st, c.StaticClients)
	var pws []storage.Password
	for _, p := range c.StaticPasswords {
		hash := []byte(p.Hash)
		if p.Password != "" {
			h, err := bcrypt.GenerateFromPassword([]byte(p.Password), bcrypt.DefaultCost)
			if err != nil {
				return nil, err
			}
			hash = h
		}
		pws = append(pws, storage.Password{Email: p.Email, Hash: hash, Username: p.Username,
			UserID: p.UserID, Groups: p.Groups, EmailVerified: p.EmailVerified})
	}
	st = storage.WithStaticPasswords(st, pws, logger)
	var conns []storage.Connector
	for _, cn := range c.Connectors {
		cfg := []byte(cn.Config)
		if len(cfg) == 0 {
			cfg = []byte("{}")
		}
		conns = append(conns, storage.Connector{ID: cn.ID, Type: cn.Type, Name: cn.Name, Config: cfg})
	}
	if c.EnablePasswordDB {
		conns = append(conns, storage.Connector{ID: server.LocalConnector, Type: server.LocalConnector, Name: "Email"})
	}
	if len(conns) == 0 {
		return nil, errors.New("no connectors: set enablePasswordDB or connectors")
	}
	return storage.WithStaticConnectors(st, conns), nil
}

func listen(ctx context.Context, c config, h http.Handler, logger *slog.Logger) error {
	if c.Web.HTTPS == "" || c.Web.TLSCert == "" || c.Web.TLSKey == "" {
		return errors.New("web.https, web.tlsCert and web.tlsKey are required")
	}
	l, err := net.Listen("tcp", c.Web.HTTPS)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.ServeTLS(l, c.Web.TLSCert, c.Web.TLSKey) }()
	logger.Info("listening (https)", "address", c.Web.HTTPS, "issuer", c.Issuer)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return hs.Shutdown(shutdown)
}
