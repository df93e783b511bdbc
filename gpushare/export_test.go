package gpushare

// FitNaive is the baseline of the placement benchmarks: Fit without the
// node index, fitting the pod on every node and then taking the best by the
// node policy.
func (l *Ledger) FitNaive(req PodRequest) (Placement, error) {
	p, err := l.compile(&req)
	if err != nil {
		return Placement{}, err
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	s := new(scratch)
	var best *nodeState
	for _, n := range l.nodes {
		if !n.registered || len(n.gpus) == 0 || !fitNode(n, &p, s, nil) {
			continue
		}
		if best == nil {
			best = n
			continue
		}
		better := n.score > best.score
		if p.nodePolicy == NodeSpread {
			better = n.score < best.score
		}
		if better || (n.score == best.score && n.name < best.name) {
			best = n
		}
	}
	if best == nil {
		return Placement{}, l.explainLocked(&p, s)
	}
	fitNode(best, &p, s, nil)
	return placementFrom(best, p.req, s.picks), nil
}
