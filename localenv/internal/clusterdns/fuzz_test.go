package clusterdns

import (
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// FuzzAnswer feeds arbitrary messages to the query handler: it must never
// panic, and whatever it answers must be a well-formed DNS response.
func FuzzAnswer(f *testing.F) {
	f.Add(query(f, "etcd-0.etcd-headless.tenant-demo.svc.", dnsmessage.TypeA))
	f.Add(query(f, "2.1.40.127.in-addr.arpa.", dnsmessage.TypePTR))
	f.Add(query(f, "example.org.", dnsmessage.TypeAAAA))
	f.Add([]byte{})
	f.Add([]byte{0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 0x0c})
	r := testRecords(f)
	f.Fuzz(func(t *testing.T, msg []byte) {
		out, err := answer(r, "cluster.local", msg, maxUDPSize)
		if err != nil {
			return
		}
		var m dnsmessage.Message
		if err := m.Unpack(out); err != nil {
			t.Fatalf("answer is not a DNS message: %v", err)
		}
		if !m.Header.Response || len(out) > maxUDPSize {
			t.Fatalf("bad answer: response %t, %d bytes", m.Header.Response, len(out))
		}
	})
}
