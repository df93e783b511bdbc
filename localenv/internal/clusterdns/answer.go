package clusterdns

import (
	"errors"
	"fmt"

	"golang.org/x/net/dns/dnsmessage"
)

// ttl is the time to live of every answer, in seconds. Short, because pods
// come and go; Go's resolver does not cache anyway.
const ttl = 5

// maxUDPSize is the largest answer sent over UDP without EDNS; longer
// answers are truncated (TC set) and the client retries over TCP.
const maxUDPSize = 512

// answer builds the response to the DNS query message req from the records
// r. It fails only when req is not a DNS query that can be answered at all
// (then the caller sends nothing, as servers do with garbage); questions it
// has no records for get NXDOMAIN. With maxSize > 0 a longer response is
// replaced by an empty truncated one.
func answer(r *records, domain string, req []byte, maxSize int) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedQuery, err)
	}
	if h.Response {
		return nil, fmt.Errorf("%w: message is a response", ErrMalformedQuery)
	}
	q, err := p.Question()
	if err != nil {
		if errors.Is(err, dnsmessage.ErrSectionDone) {
			return nil, fmt.Errorf("%w: no question", ErrMalformedQuery)
		}
		return nil, fmt.Errorf("%w: %w", ErrMalformedQuery, err)
	}
	resp := dnsmessage.Header{ID: h.ID, Response: true, OpCode: h.OpCode, Authoritative: true,
		RecursionDesired: h.RecursionDesired}
	if h.OpCode != 0 {
		resp.RCode = dnsmessage.RCodeNotImplemented
		return build(resp, q, nil)
	}
	rrs, found := lookup(r, domain, q)
	if !found {
		resp.RCode = dnsmessage.RCodeNameError
	}
	out, err := build(resp, q, rrs)
	if err != nil {
		return nil, err
	}
	if maxSize > 0 && len(out) > maxSize {
		resp.Truncated = true
		return build(resp, q, nil)
	}
	return out, nil
}

// lookup returns the resource records answering q; found is false when the
// name does not exist at all (NXDOMAIN), true with no records when it exists
// but has no records of the asked type.
func lookup(r *records, domain string, q dnsmessage.Question) (rrs []dnsmessage.Resource, found bool) {
	hdr := func(t dnsmessage.Type) dnsmessage.ResourceHeader {
		return dnsmessage.ResourceHeader{Name: q.Name, Type: t, Class: dnsmessage.ClassINET, TTL: ttl}
	}
	if q.Class != dnsmessage.ClassINET && q.Class != dnsmessage.ClassANY {
		return nil, false
	}
	if a, ok := reverseAddr(q.Name.String()); ok {
		names := r.ptr[a]
		if q.Type == dnsmessage.TypePTR || q.Type == dnsmessage.TypeALL {
			for _, n := range names {
				target, err := dnsmessage.NewName(n)
				if err != nil {
					continue
				}
				rrs = append(rrs, dnsmessage.Resource{Header: hdr(dnsmessage.TypePTR), Body: &dnsmessage.PTRResource{PTR: target}})
			}
		}
		return rrs, len(names) > 0
	}
	name, ok := shortName(q.Name.String(), domain)
	if !ok {
		return nil, false
	}
	if target, ok := r.cname[name]; ok {
		t, err := dnsmessage.NewName(target)
		if err != nil {
			return nil, true
		}
		return []dnsmessage.Resource{{Header: hdr(dnsmessage.TypeCNAME), Body: &dnsmessage.CNAMEResource{CNAME: t}}}, true
	}
	addrs, ok := r.addrs[name]
	if !ok {
		return nil, false
	}
	for _, a := range addrs {
		switch {
		case a.Is4() && (q.Type == dnsmessage.TypeA || q.Type == dnsmessage.TypeALL):
			rrs = append(rrs, dnsmessage.Resource{Header: hdr(dnsmessage.TypeA), Body: &dnsmessage.AResource{A: a.As4()}})
		case a.Is6() && (q.Type == dnsmessage.TypeAAAA || q.Type == dnsmessage.TypeALL):
			rrs = append(rrs, dnsmessage.Resource{Header: hdr(dnsmessage.TypeAAAA), Body: &dnsmessage.AAAAResource{AAAA: a.As16()}})
		}
	}
	return rrs, true
}

func build(h dnsmessage.Header, q dnsmessage.Question, rrs []dnsmessage.Resource) ([]byte, error) {
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), h)
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedQuery, err)
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	for _, rr := range rrs {
		var err error
		switch body := rr.Body.(type) {
		case *dnsmessage.AResource:
			err = b.AResource(rr.Header, *body)
		case *dnsmessage.AAAAResource:
			err = b.AAAAResource(rr.Header, *body)
		case *dnsmessage.PTRResource:
			err = b.PTRResource(rr.Header, *body)
		case *dnsmessage.CNAMEResource:
			err = b.CNAMEResource(rr.Header, *body)
		}
		if err != nil {
			return nil, err
		}
	}
	return b.Finish()
}
