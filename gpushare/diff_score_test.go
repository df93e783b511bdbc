package gpushare_test

import (
	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/internal/hamiref"
)

// placementScoreAgrees compares the score a placement carries with HAMi's
// score of the chosen node, and with the ledger's.
func (w *world) placementScoreAgrees(pl gpushare.Placement, r hamiref.NodeResult) bool {
	nu, ok := w.ledger.Node(pl.Node)
	return ok && pl.Score == r.Score && nu.Score == r.Score
}
