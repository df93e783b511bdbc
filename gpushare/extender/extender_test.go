package extender_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/extender"
	"github.com/cozystack/tenantkit/gpushare/hamisim"
)

func gpuPod(name string, memMiB int64) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, UID: "uid-" + "name"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{gpushare.ResourceGPU: resource.MustParse("1"),
				gpushare.ResourceMemory: *resource.NewQuantity(memMiB, resource.DecimalSI)}}}}}}
}

// start registers two T4 nodes (2 GPUs of 15360 MiB each) and serves an
// extender over them.
func start(t *testing.T, mode extender.Mode) (*fake.Clientset, *extender.Extender, *httptest.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	cs := fake.NewClientset()
	for _, n := range []string{"gpu-1", "gpu-2"} {
		require.NoError(t, hamisim.RegisterNode(ctx, cs, n, hamisim.GPUs(n, 2, "NVIDIA-Tesla T4", 15360)))
	}
	x, err := extender.New(cs, extender.Config{Mode: mode})
	require.NoError(t, err)
	require.NoError(t, x.Watch(ctx))
	require.NoError(t, x.Watch(ctx), "a second Watch returns the first's result")
	srv := httptest.NewServer(x.Handler())
	t.Cleanup(srv.Close)
	return cs, x, srv
}

func post(t *testing.T, url string, body any) (int, []byte) {
	t.Helper()
	var data []byte
	switch b := body.(type) {
	case string:
		data = []byte(b)
	default:
		var err error
		data, err = json.Marshal(b)
		require.NoError(t, err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(data))
	require.NoError(t, err)
	defer resp.Body.Close()
	var out bytes.Buffer
	_, err = out.ReadFrom(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out.Bytes()
}

func filter(t *testing.T, url string, pod *corev1.Pod, nodes ...string) extenderv1.ExtenderFilterResult {
	t.Helper()
	code, body := post(t, url+"/filter", extenderv1.ExtenderArgs{Pod: pod, NodeNames: &nodes})
	require.Equal(t, http.StatusOK, code, string(body))
	var res extenderv1.ExtenderFilterResult
	require.NoError(t, json.Unmarshal(body, &res))
	return res
}

// HAMi's mode keeps the node gpushare's Fit picks, among the candidates
// kube-scheduler sent; refusals carry gpushare's per-node reasons.
func TestFilterHAMiMode(t *testing.T) {
	_, x, srv := start(t, "")
	req, err := gpushare.NewPodRequest(gpuPod("a", 10000), x.Ledger().Config())
	require.NoError(t, err)
	want, err := x.Ledger().Fit(req)
	require.NoError(t, err)

	res := filter(t, srv.URL, gpuPod("a", 10000), "gpu-1", "gpu-2")
	require.Empty(t, res.Error)
	require.Equal(t, []string{want.Node}, *res.NodeNames)

	other := map[string]string{"gpu-1": "gpu-2", "gpu-2": "gpu-1"}[want.Node]
	res = filter(t, srv.URL, gpuPod("a", 10000), other, "cpu-1")
	require.Equal(t, []string{other}, *res.NodeNames, "the pick among the candidates only")

	res = filter(t, srv.URL, gpuPod("big", 20000), "gpu-1", "gpu-2", "cpu-1")
	require.Empty(t, *res.NodeNames)
	require.Len(t, res.FailedNodes, 3)
	require.Contains(t, res.FailedNodes["gpu-1"], "CardInsufficientMemory")
	require.Contains(t, res.FailedNodes["gpu-1"], "15360 MiB free < 20000 requested")
	require.Contains(t, res.FailedNodes["cpu-1"], "NodeNotRegistered")
}

// The scores mode keeps every node the pod fits on and scores them.
func TestFilterScoresMode(t *testing.T) {
	cs, x, srv := start(t, extender.ModeScores)
	res := filter(t, srv.URL, gpuPod("a", 10000), "gpu-1", "gpu-2")
	require.ElementsMatch(t, []string{"gpu-1", "gpu-2"}, *res.NodeNames)

	// Fill gpu-1 a little: binpack scores it above the idle gpu-2.
	pod := gpuPod("busy", 4000)
	_, err := cs.CoreV1().Pods("ml").Create(t.Context(), pod, metav1.CreateOptions{})
	require.NoError(t, err)
	code, body := post(t, srv.URL+"/bind", extenderv1.ExtenderBindingArgs{PodName: "busy", PodNamespace: "ml", Node: "gpu-1"})
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `{"Error":""}`, string(body))
	require.Equal(t, 1, x.Ledger().Summary().Pods)

	nodes := []string{"gpu-1", "gpu-2"}
	code, body = post(t, srv.URL+"/prioritize", extenderv1.ExtenderArgs{Pod: gpuPod("a", 10000), NodeNames: &nodes})
	require.Equal(t, http.StatusOK, code, string(body))
	var list extenderv1.HostPriorityList
	require.NoError(t, json.Unmarshal(body, &list))
	require.Len(t, list, 2)
	require.Greater(t, list[0].Score, list[1].Score, "binpack: the busier gpu-1 first")
}

// Bind writes HAMi's annotations and binds; a bind whose GPU was taken
// since Filter fails cleanly, and concurrent binds never double-book.
func TestBindConcurrent(t *testing.T) {
	cs, x, srv := start(t, "")
	const n = 12 // 4 GPUs of 15360 MiB hold 4 pods of 10000 MiB
	for i := range n {
		_, err := cs.CoreV1().Pods("ml").Create(t.Context(), gpuPod("p"+string(rune('a'+i)), 10000), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	errs := make([]string, n)
	for i := range n {
		wg.Go(func() {
			node := []string{"gpu-1", "gpu-2"}[i%2]
			body, _ := json.Marshal(extenderv1.ExtenderBindingArgs{PodName: "p" + string(rune('a'+i)), PodNamespace: "ml", Node: node})
			resp, err := http.Post(srv.URL+"/bind", "application/json", bytes.NewReader(body))
			if err != nil {
				errs[i] = "post: " + err.Error()
				return
			}
			defer resp.Body.Close()
			var res extenderv1.ExtenderBindingResult
			if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK {
				errs[i] = fmt.Sprintf("status %d, decode %v", resp.StatusCode, err)
				return
			}
			errs[i] = res.Error
		})
	}
	wg.Wait()
	ok := 0
	for i, e := range errs {
		if e == "" {
			ok++
			continue
		}
		// Lost before Fit ("fits none") or between Fit and Allocate.
		require.Regexp(t, `fits none|^allocate ml/p.* CardInsufficientMemory`, e, "pod %d", i)
	}
	require.Equal(t, 4, ok)
	for _, nu := range x.Ledger().Nodes() {
		for _, g := range nu.GPUs {
			require.False(t, g.Overcommitted, g.ID)
			require.LessOrEqual(t, g.Used.MemoryMiB, g.Capacity.MemoryMiB)
		}
	}
	pods, err := cs.CoreV1().Pods("ml").List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	annotated := 0
	for _, p := range pods.Items {
		if v := p.Annotations[gpushare.AnnotationAllocated]; v != "" {
			annotated++
			require.Equal(t, v, p.Annotations[gpushare.AnnotationToAllocate])
			require.Equal(t, string(gpushare.BindAllocating), p.Annotations[gpushare.AnnotationBindPhase])
			require.Equal(t, p.Annotations[gpushare.AnnotationNode], p.Labels[gpushare.AnnotationNode])
			alloc, err := gpushare.DecodePodDevices(v)
			require.NoError(t, err)
			require.Equal(t, int32(10000), alloc[0][0].MemoryMiB)
			require.Contains(t, alloc[0][0].UUID, p.Annotations[gpushare.AnnotationNode])
		}
	}
	require.Equal(t, 4, annotated, "refused binds leave no annotations")
}

// Malformed requests are answered 400 with the reason.
func TestBadRequests(t *testing.T) {
	_, _, srv := start(t, "")
	for _, tc := range []struct{ path, body, want string }{
		{"/filter", "", "empty body"},
		{"/filter", "{", "decode"},
		{"/filter", "[]", "decode"},
		{"/filter", `{"NodeNames":["a"]}`, "no Pod"},
		{"/filter", `{"Pod":{"metadata":{"name":"a"}}}`, "neither NodeNames nor Nodes"},
		{"/filter", `{"Pod":{"metadata":{"name":"a"}},"NodeNames":[]} {}`, "data after"},
		{"/filter", `{"Pod":{"spec":{"containers":7}},"NodeNames":[]}`, "decode"},
		{"/prioritize", `{"Pod":null}`, "no Pod"},
		{"/bind", `{"PodName":"a","PodNamespace":"ml"}`, "no Node"},
		{"/bind", `{"PodName":1}`, "decode"},
	} {
		t.Run(tc.path+" "+tc.body, func(t *testing.T) {
			code, body := post(t, srv.URL+tc.path, tc.body)
			require.Equal(t, http.StatusBadRequest, code)
			require.Contains(t, string(body), tc.want)
		})
	}
}

func TestConfig(t *testing.T) {
	cs := fake.NewClientset()
	for _, tc := range []struct {
		cfg  extender.Config
		want error
	}{
		{extender.Config{Addr: "0.0.0.0:8443"}, extender.ErrInsecure},
		{extender.Config{Addr: "10.0.0.1:8443"}, extender.ErrInsecure},
		{extender.Config{CertFile: "c"}, extender.ErrInvalidConfig},
		{extender.Config{Mode: "best"}, extender.ErrInvalidConfig},
		{extender.Config{Addr: "0.0.0.0:8443", CertFile: "c", KeyFile: "k"}, nil},
		{extender.Config{Addr: "[::1]:0"}, nil},
		{extender.Config{}, nil},
	} {
		_, err := extender.New(cs, tc.cfg)
		require.ErrorIs(t, err, tc.want, "%+v", tc.cfg)
	}
}

// Start serves on loopback with the zero Config, after the ledger synced.
func TestStart(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	x, err := extender.New(fake.NewClientset(), extender.Config{})
	require.NoError(t, err)
	addr, err := x.Start(ctx)
	require.NoError(t, err)
	resp, err := http.Get("http://" + addr.String() + "/healthz")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	code, body := post(t, "http://"+addr.String()+"/filter", "{")
	require.Equal(t, http.StatusBadRequest, code, string(body))
}
