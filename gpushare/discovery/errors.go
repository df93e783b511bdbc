package discovery

import (
	"errors"
	"fmt"
)

// ErrNoNVML is returned when NVML cannot be used on this machine: libnvidia-ml is not
// installed, or the NVIDIA driver is not loaded. Machines without NVIDIA
// GPUs get it from Discover; it is the one error to expect there.
var ErrNoNVML = errors.New("discovery: NVML unavailable: no NVIDIA driver (libnvidia-ml) on this machine")

// ErrNoGPU is returned when discovery finds no GPU to register.
var ErrNoGPU = errors.New("discovery: no GPU to register")

// NVMLError reports an NVML call that failed.
type NVMLError struct {
	// Call is the NVML function, e.g. "nvmlDeviceGetUUID".
	Call string
	// Device is the device index, or -1 for library calls.
	Device int
	// Code is NVML's return code.
	Code int
	// Message is NVML's text for Code, e.g. "ERROR_LIBRARY_NOT_FOUND".
	Message string
	// Err is ErrNoNVML when the failure means NVML is not available.
	Err error
}

// Error describes the failure in one line.
func (e *NVMLError) Error() string {
	where := e.Call
	if e.Device >= 0 {
		where = fmt.Sprintf("%s (device %d)", e.Call, e.Device)
	}
	msg := fmt.Sprintf("%s: %s (NVML code %d)", where, e.Message, e.Code)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns ErrNoNVML when NVML is unavailable, nil otherwise.
func (e *NVMLError) Unwrap() error { return e.Err }
