package gpushare

// BindPhase is the value of hami.io/bind-phase.
type BindPhase string

const (
	// BindAllocating is set by the scheduler's Bind before kubelet runs the
	// device plugin's Allocate.
	BindAllocating BindPhase = "allocating"
	// BindSuccess is set by the device plugin once every container got its
	// devices.
	BindSuccess BindPhase = "success"
	// BindFailed is set by the device plugin when Allocate failed.
	BindFailed BindPhase = "failed"
)

// ParseBindPhase decodes a hami.io/bind-phase value. Anything but the three
// phases is an *AnnotationError. gpushare does not consult the phase for
// accounting, as HAMi does not.
func ParseBindPhase(value string) (BindPhase, error) {
	switch p := BindPhase(value); p {
	case BindAllocating, BindSuccess, BindFailed:
		return p, nil
	}
	return "", &AnnotationError{Key: AnnotationBindPhase, Value: value,
		Reason: "want allocating, success or failed"}
}
