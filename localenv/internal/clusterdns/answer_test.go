package clusterdns

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/dns/dnsmessage"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testRecords: a headless service with two named endpoints (one not ready),
// a cluster-IP service, an ExternalName service and a slice of a service
// that does not exist.
func testRecords(t testing.TB) *records {
	t.Helper()
	svc := func(name string, mut func(*corev1.Service)) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "tenant-demo"}}
		if mut != nil {
			mut(s)
		}
		return s
	}
	ep := func(addr, host string, ready bool) discoveryv1.Endpoint {
		e := discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}
		if host != "" {
			e.Hostname = &host
		}
		return e
	}
	slice := func(svcName string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: svcName + "-x", Namespace: "tenant-demo", Labels: map[string]string{discoveryv1.LabelServiceName: svcName}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   eps,
		}
	}
	services := []*corev1.Service{
		svc("etcd-headless", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }),
		svc("etcd", func(s *corev1.Service) { s.Spec.ClusterIP = "10.0.0.9" }),
		svc("upstream", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeExternalName
			s.Spec.ExternalName = "example.org"
		}),
	}
	slices := []*discoveryv1.EndpointSlice{
		slice("etcd-headless", ep("10.40.1.2", "etcd-0", true), ep("10.40.2.2", "etcd-1", true), ep("10.40.3.2", "etcd-2", false)),
		slice("etcd", ep("10.40.1.2", "", true), ep("10.40.3.2", "", false)),
		slice("gone", ep("10.40.9.9", "x", true)),
	}
	toHost := func(a netip.Addr) netip.Addr { b := a.As4(); b[0] = 127; return netip.AddrFrom4(b) }
	return buildRecords("cluster.local", toHost, services, slices, nil)
}

func query(t testing.TB, name string, typ dnsmessage.Type) []byte {
	t.Helper()
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 42, RecursionDesired: true})
	require.NoError(t, b.StartQuestions())
	require.NoError(t, b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: typ, Class: dnsmessage.ClassINET}))
	msg, err := b.Finish()
	require.NoError(t, err)
	return msg
}

func TestAnswer(t *testing.T) {
	r := testRecords(t)
	tests := []struct {
		name  string
		qname string
		qtype dnsmessage.Type
		rcode dnsmessage.RCode
		want  []string
	}{
		{"member short form", "etcd-0.etcd-headless.tenant-demo.svc.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, []string{"127.40.1.2"}},
		{"member with domain", "etcd-1.etcd-headless.tenant-demo.svc.cluster.local.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, []string{"127.40.2.2"}},
		{"case insensitive", "ETCD-0.etcd-headless.Tenant-Demo.SVC.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, []string{"127.40.1.2"}},
		{"not ready member", "etcd-2.etcd-headless.tenant-demo.svc.", dnsmessage.TypeA, dnsmessage.RCodeNameError, nil},
		{"headless service", "etcd-headless.tenant-demo.svc.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, []string{"127.40.1.2", "127.40.2.2"}},
		{"cluster IP service answers ready endpoints", "etcd.tenant-demo.svc.cluster.local.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, []string{"127.40.1.2"}},
		{"AAAA of a v4 name is empty", "etcd-0.etcd-headless.tenant-demo.svc.", dnsmessage.TypeAAAA, dnsmessage.RCodeSuccess, nil},
		{"external name", "upstream.tenant-demo.svc.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, []string{"example.org."}},
		{"reverse", "2.1.40.127.in-addr.arpa.", dnsmessage.TypePTR, dnsmessage.RCodeSuccess, []string{"etcd-0.etcd-headless.tenant-demo.svc.cluster.local."}},
		{"unknown reverse", "9.9.9.127.in-addr.arpa.", dnsmessage.TypePTR, dnsmessage.RCodeNameError, nil},
		{"slice of a missing service", "x.gone.tenant-demo.svc.", dnsmessage.TypeA, dnsmessage.RCodeNameError, nil},
		{"outside the cluster", "example.org.", dnsmessage.TypeA, dnsmessage.RCodeNameError, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := answer(r, "cluster.local", query(t, tt.qname, tt.qtype), maxUDPSize)
			require.NoError(t, err)
			var m dnsmessage.Message
			require.NoError(t, m.Unpack(out))
			require.Equal(t, uint16(42), m.Header.ID)
			require.True(t, m.Header.Response)
			require.True(t, m.Header.Authoritative)
			require.Equal(t, tt.rcode, m.Header.RCode)
			var got []string
			for _, rr := range m.Answers {
				switch b := rr.Body.(type) {
				case *dnsmessage.AResource:
					got = append(got, netip.AddrFrom4(b.A).String())
				case *dnsmessage.PTRResource:
					got = append(got, b.PTR.String())
				case *dnsmessage.CNAMEResource:
					got = append(got, b.CNAME.String())
				}
			}
			require.Equal(t, tt.want, got)
		})
	}
}

func TestAnswer_rejectsWhatIsNotAQuery(t *testing.T) {
	r := testRecords(t)
	resp, err := answer(r, "cluster.local", query(t, "etcd.tenant-demo.svc.", dnsmessage.TypeA), 0)
	require.NoError(t, err)
	for name, msg := range map[string][]byte{
		"garbage":     []byte("not dns"),
		"empty":       nil,
		"a response":  resp,
		"no question": func() []byte { b, _ := (&dnsmessage.Message{Header: dnsmessage.Header{ID: 1}}).Pack(); return b }(),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := answer(r, "cluster.local", msg, maxUDPSize)
			require.ErrorIs(t, err, ErrMalformedQuery)
		})
	}
}

func TestAnswer_truncatesLongUDPAnswers(t *testing.T) {
	var eps []discoveryv1.Endpoint
	for i := range 60 {
		ready := true
		eps = append(eps, discoveryv1.Endpoint{Addresses: []string{netip.AddrFrom4([4]byte{10, 1, 1, byte(i + 1)}).String()},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready}})
	}
	r := buildRecords("cluster.local", nil,
		[]*corev1.Service{{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "ns"}}},
		[]*discoveryv1.EndpointSlice{{ObjectMeta: metav1.ObjectMeta{Name: "big-1", Namespace: "ns",
			Labels: map[string]string{discoveryv1.LabelServiceName: "big"}}, AddressType: discoveryv1.AddressTypeIPv4, Endpoints: eps}}, nil)
	q := query(t, "big.ns.svc.", dnsmessage.TypeA)
	udp, err := answer(r, "cluster.local", q, maxUDPSize)
	require.NoError(t, err)
	var m dnsmessage.Message
	require.NoError(t, m.Unpack(udp))
	require.True(t, m.Header.Truncated)
	require.Empty(t, m.Answers)
	tcp, err := answer(r, "cluster.local", q, 0)
	require.NoError(t, err)
	require.NoError(t, m.Unpack(tcp))
	require.Len(t, m.Answers, 60)
}
