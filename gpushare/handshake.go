package gpushare

import (
	"fmt"
	"strings"
	"time"
)

// HandshakeState is the verb of a hami.io/node-handshake value.
type HandshakeState string

const (
	// HandshakeReported is written by device plugins up to HAMi v2.7:
	// "Reported <time>".
	HandshakeReported HandshakeState = "Reported"
	// HandshakeRequesting is written by the scheduler: "Requesting_<time>".
	HandshakeRequesting HandshakeState = "Requesting"
	// HandshakeDeleted marked a node cleaned up by older schedulers:
	// "Deleted_<time>".
	HandshakeDeleted HandshakeState = "Deleted"
)

// Time layouts HAMi has used in handshakes.
const (
	// handshakeLayout is time.DateTime, used by the scheduler since v2.8.
	handshakeLayout = time.DateTime
	// handshakeLayoutLegacy is the scheduler's layout up to v2.7.
	handshakeLayoutLegacy = "2006.01.02 15:04:05"
	// reportedLayout is time.Time.String without the monotonic part.
	reportedLayout = "2006-01-02 15:04:05.999999999 -0700 MST"
)

// Handshake is a decoded hami.io/node-handshake value.
type Handshake struct {
	// State is the verb: Reported, Requesting or Deleted.
	State HandshakeState
	// Time is when the value was written. Scheduler timestamps carry no
	// zone: they are read in loc (see DecodeHandshake).
	Time time.Time
}

// String encodes h as HAMi v2.8+ writes it: "Requesting_2026-08-21 10:00:00"
// (and "Deleted_…" alike) in h.Time's location, or "Reported " followed by
// time.Time.String for HandshakeReported.
func (h Handshake) String() string {
	if h.State == HandshakeReported {
		return string(HandshakeReported) + " " + h.Time.String()
	}
	return string(h.State) + "_" + h.Time.Format(handshakeLayout)
}

// DecodeHandshake decodes a hami.io/node-handshake value. Scheduler
// timestamps ("Requesting_…", "Deleted_…") have no zone and are read in
// loc (HAMi uses the scheduler's local time); nil means time.Local. Both
// the v2.8+ layout (2006-01-02 15:04:05) and the older one
// (2006.01.02 15:04:05) are accepted. Errors are *AnnotationError.
func DecodeHandshake(value string, loc *time.Location) (Handshake, error) {
	h, err := parseHandshake(value, loc)
	if err != nil {
		return Handshake{}, &AnnotationError{Key: AnnotationHandshake, Value: value, Reason: err.Error()}
	}
	return h, nil
}

func parseHandshake(value string, loc *time.Location) (Handshake, error) {
	if loc == nil {
		loc = time.Local
	}
	if rest, ok := strings.CutPrefix(value, string(HandshakeReported)+" "); ok {
		if i := strings.Index(rest, " m="); i >= 0 {
			rest = rest[:i]
		}
		t, err := time.Parse(reportedLayout, rest)
		if err != nil {
			return Handshake{}, fmt.Errorf("reported time %q: not time.Time.String", rest)
		}
		return Handshake{State: HandshakeReported, Time: t}, nil
	}
	verb, ts, ok := strings.Cut(value, "_")
	state := HandshakeState(verb)
	if !ok || (state != HandshakeRequesting && state != HandshakeDeleted) {
		return Handshake{}, fmt.Errorf("want Reported <time>, Requesting_<time> or Deleted_<time>")
	}
	for _, layout := range []string{handshakeLayout, handshakeLayoutLegacy} {
		if t, err := time.ParseInLocation(layout, ts, loc); err == nil {
			return Handshake{State: state, Time: t}, nil
		}
	}
	return Handshake{}, fmt.Errorf("time %q: want 2006-01-02 15:04:05 or 2006.01.02 15:04:05", ts)
}
