package extender

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/cozystack/tenantkit/gpushare"
)

// Mode is how Filter answers.
type Mode string

const (
	// ModeHAMi keeps the one node HAMi would pick, as HAMi's Filter does
	// (the default).
	ModeHAMi Mode = "hami"
	// ModeScores keeps every node the pod fits on; POST /prioritize scores
	// them so kube-scheduler's own scoring weighs in (HAMi #2264). It fits
	// once per candidate node, so a filter costs about candidates × nodes:
	// for hundreds of nodes, not thousands.
	ModeScores Mode = "scores"
)

// defaultMaxRequestBytes bounds a request body: ExtenderArgs with full
// Node objects (nodeCacheCapable false) at 5,000 nodes stay below it.
const defaultMaxRequestBytes = 64 << 20

// Config configures an Extender. The zero value is safe: HAMi's chart
// defaults for the ledger, ModeHAMi, plain HTTP on 127.0.0.1 at a free
// port.
type Config struct {
	// Ledger configures the decisions (gpushare.Config; zero means HAMi's
	// chart defaults).
	Ledger gpushare.Config
	// Mode is ModeHAMi ("" too) or ModeScores.
	Mode Mode
	// Addr is the listen address; "" means "127.0.0.1:0".
	Addr string
	// CertFile and KeyFile, both set, serve TLS. Without them the address
	// must be loopback (ErrInsecure otherwise).
	CertFile, KeyFile string
	// MaxRequestBytes bounds a request body; 0 means 64 MiB.
	MaxRequestBytes int64
	// Logger receives the extender's logs; nil discards them.
	Logger *slog.Logger
}

func (c Config) withDefaults() (Config, error) {
	if c.Mode == "" {
		c.Mode = ModeHAMi
	}
	if c.Mode != ModeHAMi && c.Mode != ModeScores {
		return c, fmt.Errorf("%w: mode %q (want %q or %q)", ErrInvalidConfig, c.Mode, ModeHAMi, ModeScores)
	}
	if c.Addr == "" {
		c.Addr = "127.0.0.1:0"
	}
	if c.MaxRequestBytes == 0 {
		c.MaxRequestBytes = defaultMaxRequestBytes
	}
	if c.MaxRequestBytes < 0 {
		return c, fmt.Errorf("%w: negative MaxRequestBytes", ErrInvalidConfig)
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return c, fmt.Errorf("%w: CertFile and KeyFile go together", ErrInvalidConfig)
	}
	if c.CertFile == "" && !loopback(c.Addr) {
		return c, fmt.Errorf("listen on %s: %w", c.Addr, ErrInsecure)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// loopback reports whether addr's host is a loopback IP or "localhost".
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
