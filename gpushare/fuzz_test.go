package gpushare_test

import (
	"errors"
	"testing"
	"time"

	"github.com/cozystack/tenantkit/gpushare"
)

// Every decoder: no panic, malformed input gives a typed error, and what
// decodes re-encodes to something that decodes to the same value.

func FuzzDecodeNodeDevices(f *testing.F) {
	for _, s := range []string{v100Fields9, v100Fields7, a100JSON, unhealthyV28, "[]", "", ":", "a,b:", `[null]`, `[{"index":-1}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		devs, err := gpushare.DecodeNodeDevices(s)
		if err != nil {
			var ae *gpushare.AnnotationError
			if !errors.As(err, &ae) || !errors.Is(err, gpushare.ErrMalformedAnnotation) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		enc, err := gpushare.EncodeNodeDevices(devs, gpushare.FormatJSON)
		if err != nil {
			t.Fatalf("encode decoded devices: %v", err)
		}
		again, err := gpushare.DecodeNodeDevices(enc)
		if err != nil {
			t.Fatalf("re-decode %q: %v", enc, err)
		}
		enc2, _ := gpushare.EncodeNodeDevices(again, gpushare.FormatJSON)
		if enc != enc2 {
			t.Fatalf("not stable: %q vs %q", enc, enc2)
		}
	})
}

func FuzzDecodePodDevices(f *testing.F) {
	for _, s := range []string{"GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,NVIDIA,3000,30:;", "GPU-aaaa,NVIDIA,8000,0:GPU-bbbb,NVIDIA,8000,0:;GPU-aaaa,NVIDIA,16384,0:;", ";;", "", "GPU-x[1-0],NVIDIA,1,0:;", "a,b,c:;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := gpushare.DecodePodDevices(s)
		if err != nil {
			if !errors.Is(err, gpushare.ErrMalformedAnnotation) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		enc := gpushare.EncodePodDevices(p)
		again, err := gpushare.DecodePodDevices(enc)
		if err != nil {
			t.Fatalf("re-decode %q: %v", enc, err)
		}
		if gpushare.EncodePodDevices(again) != enc {
			t.Fatalf("not stable: %q", enc)
		}
	})
}

func FuzzDecodeHandshake(f *testing.F) {
	for _, s := range []string{"Requesting_2026-08-21 10:00:00", "Requesting_2024.01.23 04:30:04", "Deleted_x", "Reported 2024-01-23 04:30:04.434037031 +0000 UTC m=+1.5", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := gpushare.DecodeHandshake(s, time.UTC)
		if err != nil {
			if !errors.Is(err, gpushare.ErrMalformedAnnotation) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		if h.State == gpushare.HandshakeReported {
			return // time.Time.String of odd zones does not always parse back
		}
		again, err := gpushare.DecodeHandshake(h.String(), time.UTC)
		if err != nil || !again.Time.Equal(h.Time) || again.State != h.State {
			t.Fatalf("round trip %q -> %q: %v", s, h.String(), err)
		}
	})
}

func FuzzDecodeCordon(f *testing.F) {
	for _, s := range []string{"GPU-a,GPU-b", " GPU-a , ", "", "a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := gpushare.DecodeCordon(s)
		if err != nil {
			if !errors.Is(err, gpushare.ErrMalformedAnnotation) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		again, err := gpushare.DecodeCordon(gpushare.EncodeCordon(ids))
		if err != nil || len(again) != len(ids) {
			t.Fatalf("round trip %q: %v %v", s, again, err)
		}
	})
}

func FuzzParseBindPhase(f *testing.F) {
	for _, s := range []string{"allocating", "success", "failed", "", "Success"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := gpushare.ParseBindPhase(s)
		if err != nil {
			if !errors.Is(err, gpushare.ErrMalformedAnnotation) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		if string(p) != s {
			t.Fatalf("%q parsed as %q", s, p)
		}
	})
}

func FuzzDecodeSelectors(f *testing.F) {
	f.Add("A100,V100", "T4", "GPU-a", "", "hami-core", "true")
	f.Add("", " , ", "", "GPU-b", "", "maybe")
	f.Fuzz(func(t *testing.T, use, nouse, uuid, nouuid, mode, numa string) {
		_, err := gpushare.DecodeSelectors(map[string]string{
			gpushare.AnnotationUseGPUType: use, gpushare.AnnotationNoUseGPUType: nouse,
			gpushare.AnnotationUseGPUUUID: uuid, gpushare.AnnotationNoUseGPUUUID: nouuid,
			gpushare.AnnotationVGPUMode: mode, gpushare.AnnotationNUMABind: numa,
		})
		if err != nil && !errors.Is(err, gpushare.ErrMalformedAnnotation) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
	})
}

func FuzzParsePolicies(f *testing.F) {
	for _, s := range []string{"binpack", "spread", "mutex,binpack,numa", "topology-aware", "pack", "", "slot=1,core=2,memory=3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, err := range []error{
			second(gpushare.ParseNodePolicy(s)), second(gpushare.ParseGPUPolicy(s)), second(gpushare.ParseWeights(s)),
		} {
			if err != nil && !errors.Is(err, gpushare.ErrInvalidRequest) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
		}
		if w, err := gpushare.ParseWeights(s); err == nil {
			if again, err := gpushare.ParseWeights(w.String()); err != nil || again != w {
				t.Fatalf("weights round trip %q: %v", s, err)
			}
		}
	})
}

func second[T any](_ T, err error) error { return err }

// FuzzParseGPUPolicy: no panic, unknown names give a *RequestError, and a
// parsed policy parses again to itself.
func FuzzParseGPUPolicy(f *testing.F) {
	for _, s := range []string{"spread", "binpack", "numa", "mutex", "topology-aware", "mutex,binpack,numa", " binpack ", "numa,,spread", "pack", ",", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := gpushare.ParseGPUPolicy(s)
		if err != nil {
			var re *gpushare.RequestError
			if !errors.As(err, &re) || !errors.Is(err, gpushare.ErrInvalidRequest) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		again, err := gpushare.ParseGPUPolicy(string(p))
		if err != nil || again != p {
			t.Fatalf("%q parsed to %q, which parses to %q, %v", s, p, again, err)
		}
	})
}
