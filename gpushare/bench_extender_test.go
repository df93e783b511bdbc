package gpushare_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/extender"
)

// BenchmarkExtenderFilter times the extender's filter handler (ExtenderArgs
// decoded from JSON with the names of all 5,000 nodes, as kube-scheduler
// sends them with nodeCacheCapable, the decision, the result encoded) on
// the big cluster, interleaved with the same decision through FitNaive
// (the same body decoded, NewPodRequest, FitNaive), and reports
// x-fitnaive: how many times faster the handler is (and x-fitnaive-fits
// over the pods that fit, fit-share of them). Both must pick the same
// node.
func BenchmarkExtenderFilter(b *testing.B) {
	nodes, pods := bigCluster(b)
	x, err := extender.New(fake.NewClientset(), extender.Config{})
	if err != nil {
		b.Fatal(err)
	}
	if err := x.Watch(b.Context()); err != nil {
		b.Fatal(err)
	}
	l := x.Ledger()
	if err := l.Load(nodes, pods); err != nil {
		b.Fatal(err)
	}
	names := make([]string, len(nodes))
	for i := range nodes {
		names[i] = nodes[i].Name
	}
	stream := shapes(256)
	bodies := make([][]byte, len(stream))
	for i, r := range stream {
		c := r.Containers[0]
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: c.Name, Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				gpushare.ResourceGPU:    *resource.NewQuantity(int64(c.Count), resource.DecimalSI),
				gpushare.ResourceMemory: *resource.NewQuantity(int64(c.MemoryMiB), resource.DecimalSI),
				gpushare.ResourceCores:  *resource.NewQuantity(int64(c.Cores)+1, resource.DecimalSI)}}}}}}
		if bodies[i], err = json.Marshal(extenderv1.ExtenderArgs{Pod: pod, NodeNames: &names}); err != nil {
			b.Fatal(err)
		}
	}
	h := x.Handler()
	var handler, naive, handlerFit, naiveFit, decode time.Duration
	i, fits := 0, 0
	for b.Loop() {
		body := bodies[i%len(bodies)]
		i++
		w := httptest.NewRecorder()
		t0 := time.Now()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/filter", bytes.NewReader(body)))
		t1 := time.Now()
		var args extenderv1.ExtenderArgs
		if err := json.NewDecoder(bytes.NewReader(body)).Decode(&args); err != nil {
			b.Fatal(err)
		}
		td := time.Now()
		req, err := gpushare.NewPodRequest(args.Pod, l.Config())
		if err != nil {
			b.Fatal(err)
		}
		p, err := l.FitNaive(req)
		t2 := time.Now()
		decode += td.Sub(t1)
		handler += t1.Sub(t0)
		naive += t2.Sub(t1)
		if err != nil && !errors.Is(err, gpushare.ErrNoFit) {
			b.Fatal(err)
		}
		if err == nil {
			fits++
			handlerFit += t1.Sub(t0)
			naiveFit += t2.Sub(t1)
		}
		var res extenderv1.ExtenderFilterResult
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &res) != nil || res.NodeNames == nil {
			b.Fatalf("handler: %d %s", w.Code, w.Body)
		}
		if got := *res.NodeNames; (err == nil) != (len(got) == 1) || err == nil && got[0] != p.Node {
			b.Fatalf("handler kept %v, FitNaive %q (%v)", got, p.Node, err)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(handler.Nanoseconds())/n, "handler-ns")
	b.ReportMetric(float64(naive.Nanoseconds())/n, "fitnaive-ns")
	b.ReportMetric(float64(decode.Nanoseconds())/n, "decode-ns") // in both
	b.ReportMetric(float64(naive)/float64(handler), "x-fitnaive")
	// Pods that fit nowhere cost both sides the same explanation over
	// every node; the ratio over those that fit is the decision's alone.
	b.ReportMetric(float64(fits)/n, "fit-share")
	if fits > 0 {
		b.ReportMetric(float64(naiveFit)/float64(handlerFit), "x-fitnaive-fits")
	}
}
