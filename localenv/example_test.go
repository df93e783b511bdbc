package localenv_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/localenv"
)

// The main flow: start etcd and kube-apiserver, talk to them with
// client-go, stop them. In a test, StartT does the starting and stopping
// (see TestIntegratorFlow). This example starts real servers, so it has no
// checked output and is compiled but not run by go test.
func Example() {
	ctx := context.Background()
	env, err := localenv.Start(ctx, localenv.Config{EtcdMembers: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer env.Stop()

	cs := kubernetes.NewForConfigOrDie(env.RESTConfig())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		log.Fatal(err)
	}
	got, err := cs.CoreV1().Namespaces().Get(ctx, "demo", metav1.GetOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Name, "on", env.KubeconfigPath() != "")
}

// Start checks the configuration before it starts anything; the errors
// are sentinels to test with errors.Is.
func ExampleStart_invalidConfig() {
	_, err := localenv.Start(context.Background(), localenv.Config{EtcdMembers: -1})
	fmt.Println(errors.Is(err, localenv.ErrInvalidConfig))
	_, err = localenv.Start(context.Background(), localenv.Config{Binaries: localenv.Binaries{Etcd: "/nonexistent/etcd"}})
	fmt.Println(errors.Is(err, localenv.ErrIncompatibleBinary))
	// Output:
	// true
	// true
}
