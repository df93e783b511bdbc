package etcdrelocate

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Preflight checks that the relocation req asks for is safe to start on the
// observed state s. It does no I/O. It returns nil or a *PreflightError
// listing every failed check; errors.Is finds each sentinel (ErrTooFewVoters,
// ErrMemberDown, ErrLearnerPresent, ErrAlarm, ErrTargetHasReplica, ...).
func Preflight(s *State, req Request) error {
	if s == nil {
		return errNil("*State")
	}
	_, _, err := preflight(s, req)
	return err
}

// preflight returns the member to move and the warnings along with the
// verdict.
func preflight(s *State, req Request) (*Member, []string, error) {
	var (
		fails []Failure
		warns []string
	)
	fail := func(check string, sentinel error, format string, args ...any) {
		fails = append(fails, Failure{Check: check, Err: fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)})
	}
	if s.Layout == LayoutUnknown {
		fail("layout", ErrUnknownLayout, "no aenix StatefulSet and no %s EtcdCluster %q in namespace %q",
			GroupCozystack, req.cluster(), req.Namespace)
		return nil, nil, &PreflightError{Failures: fails}
	}
	if cp := s.Checkpoint; cp != nil {
		fail("checkpoint", ErrRelocationInProgress, "%s of member %s to node %s started %s (phase %s); resume it or clear it",
			cp.Pod, FormatID(cp.MemberID), cp.TargetNode, cp.Started.Format(time.RFC3339), cp.Phase)
	}
	if now := s.ObservedAt; s.Lease.active(now) || (now.IsZero() && s.Lease.active(time.Now())) {
		if s.Lease.gone {
			warns = append(warns, fmt.Sprintf("relocation lease %s is held by %s, a process of this machine that has exited: it is taken over after one call timeout",
				s.Lease.Name, s.Lease.Holder))
		} else {
			fails = append(fails, Failure{Check: "lease", Err: &LockedError{Namespace: s.Namespace, Lease: s.Lease.Name, Holder: s.Lease.Holder, Expires: s.Lease.Expires}})
		}
	}
	target := s.FindMember(req.Member)
	if target == nil {
		fail("member", ErrMemberNotFound, "%q is no pod, EtcdMember, member name or ID of %s/%s", req.Member, req.Namespace, req.cluster())
	} else if target.Pod == nil && !s.Layout.operatorManaged() {
		fail("member", ErrMemberNotFound, "member %s (%s) has no pod", target.Label(), target.PeerURL())
	}
	checkVoters(s, fail)
	checkStatuses(s, req, fail)
	warns = append(warns, checkVersions(s, req, fail)...)
	if target != nil {
		checkTargetNode(s, req, target, fail)
		warns = append(warns, checkCerts(s, target, fail)...)
	}
	checkWorkload(s, fail)
	if w := s.Workload; w.Kind == "EtcdCluster" && w.Operator != nil {
		if err := checkOperatorState(w.Name, w.Operator, s.ObservedAt); err != nil {
			fails = append(fails, Failure{Check: "operator", Err: err})
		}
	}
	if len(fails) > 0 {
		return target, warns, &PreflightError{Failures: fails}
	}
	return target, warns, nil
}

type failFunc func(check string, sentinel error, format string, args ...any)

func checkVoters(s *State, fail failFunc) {
	voters := s.Voters()
	switch n := len(voters); {
	case n < 3:
		fail("voters", ErrTooFewVoters, "%d voters; removing one would leave no fault tolerance", n)
	case n%2 == 0:
		fail("voters", ErrEvenVoters, "%d voters; relocate from an odd-sized cluster", n)
	}
	for _, l := range s.Learners() {
		fail("learners", ErrLearnerPresent, "member %s (%s) is a learner", l.Label(), FormatID(l.ID))
	}
	for _, m := range voters {
		switch {
		case !m.started():
			fail("members", ErrMemberDown, "voter %s (%s) has never started", m.Label(), FormatID(m.ID))
		case m.Status == nil:
			fail("members", ErrMemberDown, "voter %s (%s) does not answer: %s", m.Label(), FormatID(m.ID), m.StatusError)
		}
	}
}

func checkStatuses(s *State, req Request, fail failFunc) {
	if s.clusterID() == 0 && anyStatus(s) {
		fail("cluster-id", ErrClusterIDMismatch, "members report different cluster IDs")
	}
	leader := s.Leader()
	if leader == 0 {
		fail("leader", ErrNoLeader, "members report no leader or different leaders")
	} else if m := s.MemberByID(leader); m == nil || m.IsLearner {
		fail("leader", ErrNoLeader, "leader %s is not a voting member", FormatID(leader))
	}
	for _, a := range s.Alarms {
		fail("alarms", ErrAlarm, "%s on member %s", a.Type, FormatID(a.MemberID))
	}
	if len(s.Alarms) == 0 {
		for _, m := range s.Members {
			if m.Status != nil && len(m.Status.Errors) > 0 {
				fail("alarms", ErrAlarm, "member %s reports %s", m.Label(), strings.Join(m.Status.Errors, ", "))
			}
		}
	}
	var lo, hi uint64
	first := true
	for _, m := range s.Voters() {
		if m.Status == nil {
			continue
		}
		a := m.Status.RaftAppliedIndex
		if first || a < lo {
			lo = a
		}
		if first || a > hi {
			hi = a
		}
		first = false
	}
	if lag := req.Options.maxIndexLag(); hi-lo > lag {
		fail("raft-index", ErrIndexLag, "applied indexes range %d..%d (allowed lag %d)", lo, hi, lag)
	}
	var hash uint32
	hashed := false
	for _, m := range s.Voters() {
		switch {
		case !m.HashOK:
			// A hash that could not be taken is no mismatch: the check
			// could not be made.
			if m.Status != nil {
				fail("hashkv", ErrNotObserved, "no HashKV from %s at revision %d: %s", m.Label(), s.HashRevision, orUnknown(m.HashError))
			}
		case !hashed:
			hash, hashed = m.Hash, true
		case m.Hash != hash:
			fail("hashkv", ErrHashMismatch, "%s has hash %08x, another voter %08x at revision %d", m.Label(), m.Hash, hash, s.HashRevision)
		}
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "reason unknown"
	}
	return s
}

func anyStatus(s *State) bool {
	for _, m := range s.Members {
		if m.Status != nil {
			return true
		}
	}
	return false
}

// checkVersions applies the version policy and returns warnings.
func checkVersions(s *State, req Request, fail failFunc) []string {
	var warns []string
	minors := map[string]bool{}
	for _, m := range s.Members {
		if m.Status == nil || m.Status.Version == "" {
			continue
		}
		major, minor, patch, ok := parseVersion(m.Status.Version)
		if !ok {
			warns = append(warns, fmt.Sprintf("member %s reports an unparsable version %q", m.Label(), m.Status.Version))
			continue
		}
		minors[fmt.Sprintf("%d.%d", major, minor)] = true
		if major == 3 && minor == 5 && patch >= 1 && patch <= 19 {
			msg := fmt.Sprintf("member %s runs etcd %s: a learner promotion is saved in the v2 store only (etcd #19557); upgrade to 3.5.26+ before moving to 3.6",
				m.Label(), m.Status.Version)
			if req.Options.SkipVersionHazard {
				warns = append(warns, msg)
			} else {
				fail("version", ErrVersionHazard, "%s", msg)
			}
		} else if major == 3 && minor == 5 && patch < 26 {
			warns = append(warns, fmt.Sprintf("member %s runs etcd %s; upgrade to 3.5.26+ before any 3.6 upgrade (etcd #20793, #20967)", m.Label(), m.Status.Version))
		}
	}
	if len(minors) > 1 {
		warns = append(warns, fmt.Sprintf("members run %d different minor versions", len(minors)))
	}
	return warns
}

func parseVersion(v string) (major, minor, patch int, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) != 3 {
		return 0, 0, 0, false
	}
	if i := strings.IndexAny(parts[2], "-+"); i >= 0 {
		parts[2] = parts[2][:i]
	}
	var err1, err2, err3 error
	major, err1 = strconv.Atoi(parts[0])
	minor, err2 = strconv.Atoi(parts[1])
	patch, err3 = strconv.Atoi(parts[2])
	return major, minor, patch, err1 == nil && err2 == nil && err3 == nil
}

func checkTargetNode(s *State, req Request, target *Member, fail failFunc) {
	node := s.Node(req.TargetNode)
	switch {
	case req.TargetNode == "":
		fail("target-node", ErrTargetNode, "no target node given")
		return
	case node == nil:
		fail("target-node", ErrTargetNode, "node %q does not exist", req.TargetNode)
		return
	case target.Node() == req.TargetNode:
		fail("target-node", ErrTargetNode, "member %s already runs on %s", target.Label(), req.TargetNode)
		return
	}
	if !node.Ready {
		fail("target-node", ErrTargetNode, "node %s is not Ready", node.Name)
	}
	if node.Unschedulable {
		fail("target-node", ErrTargetNode, "node %s is cordoned", node.Name)
	}
	for _, m := range s.Members {
		if m.ID != target.ID && m.Node() == req.TargetNode {
			fail("target-node", ErrTargetHasReplica, "node %s already runs member %s", req.TargetNode, m.Label())
		}
	}
}

// checkCerts checks that every serving and peer certificate covers the DNS
// name the member will have on the target, and returns warnings.
func checkCerts(s *State, target *Member, fail failFunc) []string {
	host := hostOf(target.PeerURL())
	if s.Layout == LayoutEtcdMember {
		// The replacement gets a generated name under the same Service.
		if i := strings.Index(host, "."); i > 0 {
			host = s.Cluster + "-zzzzz" + host[i:]
		}
	}
	var warns []string
	for _, c := range s.Certificates {
		if !coversHost(c.DNSNames, host) {
			fail("certificates", ErrCertSAN, "%s does not cover %s (SANs %s)", c.Secret, host, strings.Join(c.DNSNames, ", "))
		}
		if c.Secret == PeerTLSSecret && (!c.ServerAuth || !c.ClientAuth) {
			fail("certificates", ErrCertSAN, "%s lacks the serverAuth or clientAuth usage peers need", c.Secret)
		}
		if !c.NotAfter.IsZero() && time.Until(c.NotAfter) < 24*time.Hour {
			warns = append(warns, fmt.Sprintf("%s expires at %s", c.Secret, c.NotAfter.Format(time.RFC3339)))
		}
	}
	return warns
}

// coversHost reports whether a certificate with the DNS SANs names serves
// host, with the one-label wildcard rule of RFC 6125.
func coversHost(names []string, host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, n := range names {
		n = strings.ToLower(n)
		if n == host {
			return true
		}
		if rest, ok := strings.CutPrefix(n, "*."); ok {
			if i := strings.Index(host, "."); i > 0 && host[i+1:] == rest {
				return true
			}
		}
	}
	return false
}

func checkWorkload(s *State, fail failFunc) {
	w := s.Workload
	for _, j := range s.DefragJobs {
		fail("defrag", ErrDefragRunning, "job %s is running", j)
	}
	if w.Kind == "StatefulSet" {
		if w.CurrentRevision != w.UpdateRevision {
			fail("workload", ErrRolloutInProgress, "StatefulSet %s is rolling out (%s → %s)", w.Name, w.CurrentRevision, w.UpdateRevision)
		}
		if w.ReadyReplicas < w.Replicas {
			fail("workload", ErrRolloutInProgress, "StatefulSet %s has %d of %d replicas ready", w.Name, w.ReadyReplicas, w.Replicas)
		}
		if n := len(s.Voters()); w.Replicas != n {
			fail("workload", ErrRolloutInProgress, "StatefulSet %s wants %d replicas, etcd has %d voters", w.Name, w.Replicas, n)
		}
		if w.InitialClusterState != "" && w.InitialClusterState != "existing" {
			fail("workload", ErrRolloutInProgress, "%s has ETCD_INITIAL_CLUSTER_STATE=%s; a fresh member would bootstrap a new cluster",
				clusterStateConfigMap, w.InitialClusterState)
		}
	}
	if w.Kind == "EtcdCluster" && w.Progressing {
		fail("workload", ErrRolloutInProgress, "EtcdCluster %s is still progressing", w.Name)
	}
	if s.PDB != nil && s.PDB.DisruptionsAllowed < 1 {
		fail("pdb", ErrDisruptionNotAllowed, "%s allows %d disruptions (%d of %d healthy)",
			s.PDB.Name, s.PDB.DisruptionsAllowed, s.PDB.CurrentHealthy, s.PDB.DesiredHealthy)
	}
}
