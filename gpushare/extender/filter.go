package extender

import (
	"errors"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/cozystack/tenantkit/gpushare"
)

// notRegistered is the reason for a candidate without registered GPUs.
const notRegistered = string(gpushare.ReasonNodeNotRegistered) + ": node registers no NVIDIA GPU"

// filter decides a filter call: the nodes kept (one in ModeHAMi) and why
// each other candidate was refused.
func (x *Extender) filter(pod *corev1.Pod, candidates []string) *extenderv1.ExtenderFilterResult {
	req, err := gpushare.NewPodRequest(pod, x.ledger.Config())
	if err != nil {
		return &extenderv1.ExtenderFilterResult{Error: err.Error()}
	}
	if req.GPUs() == 0 {
		kept := slices.Clone(candidates)
		return &extenderv1.ExtenderFilterResult{NodeNames: &kept, FailedNodes: extenderv1.FailedNodesMap{}}
	}
	if x.cfg.Mode == ModeScores {
		return x.filterAll(req, candidates)
	}
	pl, err := x.fitAmong(req, candidates)
	res := &extenderv1.ExtenderFilterResult{NodeNames: &[]string{}, FailedNodes: extenderv1.FailedNodesMap{}}
	var fe *gpushare.FitError
	switch {
	case err == nil:
		// As HAMi: the pick alone, the other candidates neither kept nor
		// failed.
		*res.NodeNames = []string{pl.Node}
	case errors.As(err, &fe):
		failures(fe, candidates, res.FailedNodes)
	default:
		res.Error = err.Error()
	}
	return res
}

// filterAll keeps every candidate the pod fits on (ModeScores). It fits
// once per candidate, each fit over the whole ledger narrowed to that
// node's GPUs, so its cost grows with candidates × nodes: ModeHAMi's single
// fit is the one for thousands of nodes.
func (x *Extender) filterAll(req gpushare.PodRequest, candidates []string) *extenderv1.ExtenderFilterResult {
	res := &extenderv1.ExtenderFilterResult{NodeNames: &[]string{}, FailedNodes: extenderv1.FailedNodesMap{}}
	for _, n := range candidates {
		_, err := x.fitNarrowed(req, []string{n})
		var fe *gpushare.FitError
		switch {
		case err == nil:
			*res.NodeNames = append(*res.NodeNames, n)
		case errors.As(err, &fe):
			failures(fe, []string{n}, res.FailedNodes)
		default:
			res.Error = err.Error()
			return res
		}
	}
	return res
}

// failures fills failed with the reason of each candidate in fe.
func failures(fe *gpushare.FitError, candidates []string, failed extenderv1.FailedNodesMap) {
	byNode := make(map[string]gpushare.NodeFailure, len(fe.Nodes))
	for _, f := range fe.Nodes {
		byNode[f.Node] = f
	}
	for _, n := range candidates {
		f, ok := byNode[n]
		if !ok {
			failed[n] = notRegistered
			continue
		}
		failed[n] = Reason(f) + ": " + strings.TrimPrefix(f.String(), f.Node+": ")
	}
}

// Reason names why a pod does not fit on a node in HAMi's words: the
// reasons of its GPUs, distinct and in order ("CardInsufficientMemory",
// "CardInsufficientCore,CardTimeSlicingExhausted"), or the node's own
// reason when no GPU was checked ("NodeInsufficientDevice"). Filter
// prefixes each FailedNodes entry with it.
func Reason(f gpushare.NodeFailure) string {
	var rs []string
	for _, g := range f.GPUs {
		if r := string(g.Reason); !slices.Contains(rs, r) {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return string(f.Reason)
	}
	return strings.Join(rs, ",")
}

// fitAmong finds where HAMi would place req among the candidate nodes.
// When the ledger's best node overall is a candidate (always when
// kube-scheduler sends every GPU node) that is the answer; otherwise the
// fit is repeated with the pod's UUID selector narrowed to the candidates'
// GPUs, which leaves every other rule and the node order as they are.
func (x *Extender) fitAmong(req gpushare.PodRequest, candidates []string) (gpushare.Placement, error) {
	pl, err := x.ledger.Fit(req)
	if err != nil || slices.Contains(candidates, pl.Node) {
		return pl, err
	}
	return x.fitNarrowed(req, candidates)
}

// fitNarrowed fits req with its UUID selector narrowed to the candidates'
// GPUs.
func (x *Extender) fitNarrowed(req gpushare.PodRequest, candidates []string) (gpushare.Placement, error) {
	var ids []string
	for _, n := range candidates {
		if u, ok := x.ledger.Node(n); ok {
			for _, g := range u.GPUs {
				if len(req.Selectors.UseUUIDs) == 0 || slices.Contains(req.Selectors.UseUUIDs, g.ID) {
					ids = append(ids, g.ID)
				}
			}
		}
	}
	if len(ids) == 0 {
		// Nothing to narrow to: a UUID that names no GPU makes the ledger
		// refuse every node, with each candidate's reason.
		ids = []string{"gpushare-extender-no-candidate-gpu"}
	}
	req.Selectors.UseUUIDs = ids
	return x.ledger.Fit(req)
}

// prioritize scores each candidate 0–10 by HAMi's node score under the
// pod's node policy: binpack favours the busiest node, spread the idlest.
func (x *Extender) prioritize(pod *corev1.Pod, candidates []string) (extenderv1.HostPriorityList, error) {
	req, err := gpushare.NewPodRequest(pod, x.ledger.Config())
	if err != nil {
		return nil, err
	}
	policy := req.NodePolicy
	if policy == "" {
		policy = x.ledger.Config().NodePolicy
	}
	out := make(extenderv1.HostPriorityList, len(candidates))
	for i, n := range candidates {
		var s float64
		if u, ok := x.ledger.Node(n); ok {
			s = float64(u.Score)
		}
		score := int64(math.Round(s / maxNodeScore * float64(extenderv1.MaxExtenderPriority)))
		score = min(max(score, extenderv1.MinExtenderPriority), extenderv1.MaxExtenderPriority)
		if policy == gpushare.NodeSpread {
			score = extenderv1.MaxExtenderPriority - score
		}
		out[i] = extenderv1.HostPriority{Host: n, Score: score}
	}
	return out, nil
}

// maxNodeScore is HAMi's node score of a node whose slots, cores and
// memory are all allocated (see gpushare.NodeScore).
const maxNodeScore = 30
