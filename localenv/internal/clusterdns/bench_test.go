package clusterdns

import (
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// BenchmarkAnswer measures answering one A query from the records
// snapshot. The baseline only parses the query and packs an empty
// response, the least any DNS server does per message; the ratio
// answer/baseline is the cost of the lookup itself.
func BenchmarkAnswer(b *testing.B) {
	r := testRecords(b)
	q := query(b, "etcd-1.etcd-headless.tenant-demo.svc.cluster.local.", dnsmessage.TypeA)
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var p dnsmessage.Parser
			h, err := p.Start(q)
			if err != nil {
				b.Fatal(err)
			}
			question, err := p.Question()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := build(dnsmessage.Header{ID: h.ID, Response: true}, question, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("answer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := answer(r, "cluster.local", q, maxUDPSize); err != nil {
				b.Fatal(err)
			}
		}
	})
}
