package gpushare_test

import (
	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/internal/hamiref"
)

// placementScoreAgrees compares the chosen node's score with HAMi's.
func (w *world) placementScoreAgrees(pl gpushare.Placement, r hamiref.NodeResult) bool {
	nu, ok := w.ledger.Node(pl.Node)
	return ok && nu.Score == r.Score
}
