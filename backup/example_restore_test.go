package backup_test

import (
	"context"
	"fmt"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/backup/backuptest"
)

// A preview of restoring a backup into a cluster where part of it is
// still there: the plan says, item by item and in Velero's order, what
// the restore would do. (Here the cluster is client-go's fake; give
// NewRestoreTarget a tenant cluster's REST config.)
func ExampleStore_PlanRestore() {
	var objects backuptest.MemObjects
	_ = objects.PutBackup(backuptest.Spec{Name: "demo-1", ConfigMaps: 2}) // ns-0: cm-0, cm-1, deployment web
	store, _ := backup.NewStore(backup.StoreConfig{Objects: &objects})

	// The cluster still has ns-0 and a changed cm-1.
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "ns-0"}}}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm-1", "namespace": "ns-0"}, "data": map[string]any{"payload": "changed"}}}
	lists := map[schema.GroupVersionResource]string{
		{Version: "v1", Resource: "namespaces"}: "NamespaceList", {Version: "v1", Resource: "configmaps"}: "ConfigMapList",
		{Group: "apps", Version: "v1", Resource: "deployments"}: "DeploymentList"}
	disc := kubefake.NewClientset().Discovery().(*fakediscovery.FakeDiscovery)
	disc.Resources = []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "namespaces", Kind: "Namespace", Verbs: []string{"list", "get"}},
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, ShortNames: []string{"cm"}, Verbs: []string{"list", "get"}}}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Kind: "Deployment", Namespaced: true, Verbs: []string{"list", "get"}}}},
	}
	target := backup.RestoreTarget{Dynamic: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, ns, cm), Discovery: disc}

	plan, err := store.PlanRestore(context.Background(), "demo-1", target, backup.PlanOptions{
		Spec: velerov1.RestoreSpec{ExistingResourcePolicy: velerov1.PolicyTypeNone}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(plan) // or encoding/json
	// Output:
	// restore plan for backup demo-1 (existingResourcePolicy none)
	// ACTION            RESOURCE          ITEM                         VELERO   DETAIL
	// exists-kept       namespaces        v1/Namespace ns-0            -        exists already: Velero uses it as it is
	// create            configmaps        v1/ConfigMap ns-0/cm-0       created
	// exists-different  configmaps        v1/ConfigMap ns-0/cm-1       failed   exists and differs: Velero skips it with a warning; differs in data.payload
	// create            deployments.apps  apps/v1/Deployment ns-0/web  created
	// 4 items: create 2, exists-different 1, exists-kept 1
}
