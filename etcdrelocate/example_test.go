package etcdrelocate_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"k8s.io/client-go/rest"

	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/etcdrelocate/etcdrelocatetest"
)

// The flow against a cluster: plan, print the plan for a dry run, execute
// it under the cluster's relocation Lease. Running it again resumes an
// interrupted relocation. It needs a live management cluster (restConfig),
// so it is compiled but not run by go test and has no output to check;
// PlanFor's example below prints a plan.
func ExampleRelocator_Execute() {
	ctx := context.Background()
	var restConfig *rest.Config // the management cluster, e.g. from clientcmd
	r, err := etcdrelocate.NewForConfig(restConfig, etcdrelocate.Config{})
	if err != nil {
		log.Fatal(err)
	}
	plan, err := r.Plan(ctx, etcdrelocate.Request{Namespace: "tenant-demo", Member: "etcd-1", TargetNode: "node-c"})
	if err != nil {
		log.Fatal(err) // a *PreflightError lists every reason to refuse
	}
	fmt.Print(plan) // the dry run: every step, its precondition and its check
	res, err := r.Execute(ctx, plan)
	if err != nil {
		log.Fatal(err) // errors.Is(err, etcdrelocate.ErrLocked): another run holds the Lease
	}
	fmt.Print(res.Verification)
}

// A plan is a plain value: make it from an observed state and print it for
// a dry run. Here the state is built by hand; Relocator.Plan observes a real
// cluster.
func ExamplePlanFor() {
	s, _ := etcdrelocatetest.NewState(etcdrelocatetest.StateOptions{})
	plan, err := etcdrelocate.PlanFor(s, etcdrelocate.Request{
		Namespace: s.Namespace, Member: "etcd-1", TargetNode: "node-d",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, st := range plan.Steps {
		fmt.Printf("%-16s voters=%d learners=%d fault-tolerance=%d\n", st.Kind, st.After.Voters, st.After.Learners, st.After.FaultTolerance())
	}
	// Output:
	// checkpoint       voters=3 learners=0 fault-tolerance=1
	// move-leader      voters=3 learners=0 fault-tolerance=1
	// snapshot         voters=3 learners=0 fault-tolerance=1
	// cordon           voters=3 learners=0 fault-tolerance=1
	// stop-member      voters=3 learners=0 fault-tolerance=0
	// remove-member    voters=2 learners=0 fault-tolerance=0
	// add-learner      voters=2 learners=1 fault-tolerance=0
	// claim-on-target  voters=2 learners=1 fault-tolerance=0
	// wait-pod         voters=2 learners=1 fault-tolerance=0
	// catch-up         voters=2 learners=1 fault-tolerance=0
	// promote          voters=3 learners=0 fault-tolerance=1
	// verify           voters=3 learners=0 fault-tolerance=1
	// release-volume   voters=3 learners=0 fault-tolerance=1
	// uncordon         voters=3 learners=0 fault-tolerance=1
	// finish           voters=3 learners=0 fault-tolerance=1
}

// Preflight lists every reason to refuse; branch on them with errors.Is.
func ExamplePreflight() {
	s, _ := etcdrelocatetest.NewState(etcdrelocatetest.StateOptions{Voters: 2})
	s.Alarms = []etcdrelocate.Alarm{{MemberID: s.Members[0].ID, Type: "NOSPACE"}}
	err := etcdrelocate.Preflight(s, etcdrelocate.Request{Namespace: s.Namespace, Member: "etcd-1", TargetNode: "node-a"})
	fmt.Println(errors.Is(err, etcdrelocate.ErrTooFewVoters), errors.Is(err, etcdrelocate.ErrAlarm), errors.Is(err, etcdrelocate.ErrTargetHasReplica))
	var pe *etcdrelocate.PreflightError
	if errors.As(err, &pe) {
		for _, f := range pe.Failures {
			fmt.Println(f.Check)
		}
	}
	// Output:
	// true true true
	// voters
	// alarms
	// target-node
	// pdb
}

// Fault tolerance is how many more voters may fail before quorum is lost.
func ExampleFaultTolerance() {
	for _, voters := range []int{2, 3, 5} {
		fmt.Printf("%d voters: quorum %d, tolerates %d\n", voters, etcdrelocate.Quorum(voters), etcdrelocate.FaultTolerance(voters, voters))
	}
	// Output:
	// 2 voters: quorum 2, tolerates 0
	// 3 voters: quorum 2, tolerates 1
	// 5 voters: quorum 3, tolerates 2
}

// Node maintenance: what losing a node would do to every tenant etcd, then
// an evacuation as a plain value. Here the fleet is built by hand (two
// tenants, each with a member on node-a); Relocator.ObserveFleet observes
// a real management cluster, Relocator.Evacuate carries the plan out.
func ExamplePlanEvacuationFor() {
	f := &etcdrelocate.Fleet{}
	for i, nodes := range [][]int{{0, 1, 2}, {0, 3, 4}} {
		s, _ := etcdrelocatetest.NewState(etcdrelocatetest.StateOptions{Namespace: fmt.Sprintf("tenant-%d", i+1), MemberNodes: nodes})
		f.Clusters = append(f.Clusters, etcdrelocate.FleetCluster{ClusterRef: etcdrelocate.ClusterRef{Namespace: s.Namespace, Cluster: s.Cluster}, State: s})
		f.Nodes = s.Nodes // the last tenant's: node-a … node-g
	}
	for _, c := range f.Clusters {
		c.State.Nodes = f.Nodes // one management cluster: the same nodes
	}
	report := etcdrelocate.NodeReportFor(f, "node-a")
	fmt.Println("drain-safe:", report.DrainSafe)
	plan, err := etcdrelocate.PlanEvacuationFor(f, "node-a", etcdrelocate.EvacuationOptions{MaxParallel: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range plan.Moves {
		fmt.Printf("wave %d: %s %s %s → %s\n", m.Wave+1, m.ClusterRef, m.Member, m.From, m.To)
	}
	// Output:
	// drain-safe: true
	// wave 1: tenant-1/etcd etcd-0 node-a → node-f
	// wave 1: tenant-2/etcd etcd-0 node-a → node-g
}
