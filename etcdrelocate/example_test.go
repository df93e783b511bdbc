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
// interrupted relocation.
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
