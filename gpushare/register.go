package gpushare

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// RegistrationFormat is one of the wire formats of hami.io/node-nvidia-register.
type RegistrationFormat int

const (
	// FormatJSON is the JSON array HAMi v2.10 writes.
	FormatJSON RegistrationFormat = iota
	// FormatJSONV28 is the JSON array of HAMi v2.8 and v2.9: as FormatJSON
	// with an empty "devicepairscore":{} on every device.
	FormatJSONV28
	// FormatFields9 is the colon-joined string of HAMi v2.5–v2.7, nine
	// comma fields per device: UUID,count,devmem,devcore,type,numa,health,index,mode.
	FormatFields9
	// FormatFields7 is the colon-joined string of HAMi v2.4 and earlier,
	// seven fields per device: UUID,count,devmem,devcore,type,numa,health.
	FormatFields7
)

// String returns the format's name.
func (f RegistrationFormat) String() string {
	switch f {
	case FormatJSON:
		return "json"
	case FormatJSONV28:
		return "json-v2.8"
	case FormatFields9:
		return "fields-9"
	case FormatFields7:
		return "fields-7"
	}
	return "RegistrationFormat(" + strconv.Itoa(int(f)) + ")"
}

// wireDevice mirrors HAMi's DeviceInfo field for field, in order and with
// the same tags, so that encoding/json writes the bytes HAMi writes.
type wireDevice struct {
	ID          string        `json:"id,omitempty"`
	Index       uint          `json:"index,omitempty"`
	Count       int32         `json:"count,omitempty"`
	Devmem      int32         `json:"devmem,omitempty"`
	Devcore     int32         `json:"devcore,omitempty"`
	Type        string        `json:"type,omitempty"`
	Numa        int           `json:"numa,omitempty"`
	Mode        string        `json:"mode,omitempty"`
	MIGProfiles []wireProfile `json:"migProfiles,omitempty"`
	Health      bool          `json:"health,omitempty"`
}

// wireDeviceV28 adds the pair-score struct v2.8 and v2.9 always wrote.
type wireDeviceV28 struct {
	wireDevice
	DevicePairScore struct{} `json:"devicepairscore"`
}

type wireProfile struct {
	Name       string          `json:"name"`
	MemoryMB   int32           `json:"memoryMB"`
	Core       int32           `json:"core"`
	SliceCount uint32          `json:"sliceCount"`
	Placements []wirePlacement `json:"placements"`
}

type wirePlacement struct {
	Start uint32 `json:"start"`
	Size  uint32 `json:"size"`
}

// DetectRegistrationFormat reports which format a registration value is
// written in: JSON when it starts with '[', FormatFields9 or FormatFields7
// by the field count of its first device otherwise.
func DetectRegistrationFormat(value string) RegistrationFormat {
	if strings.HasPrefix(strings.TrimSpace(value), "[") {
		if strings.Contains(value, `"devicepairscore"`) {
			return FormatJSONV28
		}
		return FormatJSON
	}
	for seg := range strings.SplitSeq(value, ":") {
		if seg != "" {
			if strings.Count(seg, ",") == 6 {
				return FormatFields7
			}
			break
		}
	}
	return FormatFields9
}

// DecodeNodeDevices decodes the value of hami.io/node-nvidia-register in any
// of the three formats HAMi has written: the JSON array (v2.8+), or the
// colon-joined string with 9 (v2.5–v2.7) or 7 (≤ v2.4) comma fields per
// device. In JSON, a missing "health" means unhealthy and a missing index or
// NUMA node means 0; an empty mode becomes ModeHAMiCore; devicepairscore,
// migtemplate and custominfo are ignored. Errors are *AnnotationError.
func DecodeNodeDevices(value string) ([]Device, error) {
	var (
		devs []Device
		err  error
	)
	if strings.HasPrefix(strings.TrimSpace(value), "[") {
		devs, err = decodeJSONDevices(value)
	} else {
		devs, err = decodeFieldDevices(value)
	}
	if err == nil {
		err = checkDevices(devs)
	}
	if err != nil {
		return nil, &AnnotationError{Key: AnnotationRegister, Value: value, Reason: err.Error()}
	}
	return devs, nil
}

func decodeJSONDevices(value string) ([]Device, error) {
	var wire []*wireDevice
	if err := json.Unmarshal([]byte(value), &wire); err != nil {
		return nil, fmt.Errorf("not a JSON device list: %w", err)
	}
	devs := make([]Device, 0, len(wire))
	for i, w := range wire {
		if w == nil {
			return nil, fmt.Errorf("device %d: null", i)
		}
		d := Device{
			ID: w.ID, Index: w.Index, Count: w.Count, MemoryMiB: w.Devmem, Cores: w.Devcore,
			Type: w.Type, NUMA: w.Numa, Mode: w.Mode, Health: w.Health,
		}
		for _, p := range w.MIGProfiles {
			mp := MIGProfile{Name: p.Name, MemoryMiB: p.MemoryMB, Cores: p.Core, SliceCount: p.SliceCount}
			for _, pl := range p.Placements {
				mp.Placements = append(mp.Placements, MIGPlacement(pl))
			}
			d.MIGProfiles = append(d.MIGProfiles, mp)
		}
		devs = append(devs, d)
	}
	return devs, nil
}

func decodeFieldDevices(value string) ([]Device, error) {
	if !strings.Contains(value, ":") {
		return nil, fmt.Errorf("no device separator ':'")
	}
	var devs []Device
	for seg := range strings.SplitSeq(value, ":") {
		if seg == "" {
			continue
		}
		d, err := decodeFieldDevice(seg)
		if err != nil {
			return nil, fmt.Errorf("device %d: %w", len(devs), err)
		}
		devs = append(devs, d)
	}
	return devs, nil
}

func decodeFieldDevice(seg string) (Device, error) {
	f := strings.Split(seg, ",")
	if len(f) != 7 && len(f) != 9 {
		return Device{}, fmt.Errorf("%d comma fields, want 7 or 9", len(f))
	}
	var (
		d   = Device{ID: f[0], Type: f[4], Mode: ModeHAMiCore}
		err error
	)
	if d.Count, err = parseInt32("count", f[1]); err != nil {
		return Device{}, err
	}
	if d.MemoryMiB, err = parseInt32("devmem", f[2]); err != nil {
		return Device{}, err
	}
	if d.Cores, err = parseInt32("devcore", f[3]); err != nil {
		return Device{}, err
	}
	if d.NUMA, err = strconv.Atoi(f[5]); err != nil {
		return Device{}, fmt.Errorf("numa %q: not a number", f[5])
	}
	if d.Health, err = strconv.ParseBool(f[6]); err != nil {
		return Device{}, fmt.Errorf("health %q: not a bool", f[6])
	}
	if len(f) == 9 {
		idx, err := strconv.ParseUint(f[7], 10, 32)
		if err != nil {
			return Device{}, fmt.Errorf("index %q: not a non-negative number", f[7])
		}
		d.Index = uint(idx)
		if f[8] != "" {
			d.Mode = f[8]
		}
	}
	return d, nil
}

func parseInt32(field, s string) (int32, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%s %q: not a 32-bit number", field, s)
	}
	return int32(n), nil
}

// checkDevices applies the rules every format shares: an ID, no negative
// capacities, and each ID once.
func checkDevices(devs []Device) error {
	seen := make(map[string]struct{}, len(devs))
	for i := range devs {
		d := &devs[i]
		if d.Mode == "" {
			d.Mode = ModeHAMiCore
		}
		switch {
		case d.ID == "":
			return fmt.Errorf("device %d: empty id", i)
		case d.Count < 0 || d.MemoryMiB < 0 || d.Cores < 0:
			return fmt.Errorf("device %s: negative count, devmem or devcore", d.ID)
		case d.NUMA < 0:
			return fmt.Errorf("device %s: negative numa", d.ID)
		case !utf8.ValidString(d.ID + d.Type + d.Mode):
			return fmt.Errorf("device %d: id, type or mode is not UTF-8", i)
		}
		if _, dup := seen[d.ID]; dup {
			return fmt.Errorf("device %s listed twice", d.ID)
		}
		seen[d.ID] = struct{}{}
	}
	return nil
}

// EncodeNodeDevices writes devices as HAMi's device plugin writes
// hami.io/node-nvidia-register in the given format, byte for byte. The
// string formats cannot carry MIG profiles or a comma or colon inside an
// ID, type or mode; those give an error wrapping ErrUnencodable.
func EncodeNodeDevices(devs []Device, format RegistrationFormat) (string, error) {
	switch format {
	case FormatJSON, FormatJSONV28:
		return encodeJSONDevices(devs, format == FormatJSONV28)
	case FormatFields9, FormatFields7:
		return encodeFieldDevices(devs, format == FormatFields9)
	}
	return "", fmt.Errorf("registration format %v: %w", format, ErrUnencodable)
}

func encodeJSONDevices(devs []Device, v28 bool) (string, error) {
	wire := make([]wireDevice, len(devs))
	for i, d := range devs {
		wire[i] = wireDevice{
			ID: d.ID, Index: d.Index, Count: d.Count, Devmem: d.MemoryMiB, Devcore: d.Cores,
			Type: d.Type, Numa: d.NUMA, Mode: d.Mode, Health: d.Health,
		}
		for _, p := range d.MIGProfiles {
			wp := wireProfile{Name: p.Name, MemoryMB: p.MemoryMiB, Core: p.Cores, SliceCount: p.SliceCount}
			if p.Placements != nil {
				wp.Placements = make([]wirePlacement, len(p.Placements))
				for j, pl := range p.Placements {
					wp.Placements[j] = wirePlacement(pl)
				}
			}
			wire[i].MIGProfiles = append(wire[i].MIGProfiles, wp)
		}
	}
	var (
		b   []byte
		err error
	)
	if v28 {
		w28 := make([]wireDeviceV28, len(wire))
		for i := range wire {
			w28[i].wireDevice = wire[i]
		}
		b, err = json.Marshal(w28)
	} else {
		b, err = json.Marshal(wire)
	}
	if err != nil {
		return "", fmt.Errorf("marshal devices: %w", err)
	}
	return string(b), nil
}

func encodeFieldDevices(devs []Device, nine bool) (string, error) {
	var b strings.Builder
	for _, d := range devs {
		if strings.ContainsAny(d.ID+d.Type+d.Mode, ",:") {
			return "", fmt.Errorf("device %q: ',' or ':' in id, type or mode: %w", d.ID, ErrUnencodable)
		}
		if len(d.MIGProfiles) > 0 {
			return "", fmt.Errorf("device %q: MIG profiles need the JSON format: %w", d.ID, ErrUnencodable)
		}
		b.WriteString(d.ID)
		b.WriteByte(',')
		b.WriteString(strconv.FormatInt(int64(d.Count), 10))
		b.WriteByte(',')
		b.WriteString(strconv.FormatInt(int64(d.MemoryMiB), 10))
		b.WriteByte(',')
		b.WriteString(strconv.FormatInt(int64(d.Cores), 10))
		b.WriteByte(',')
		b.WriteString(d.Type)
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(d.NUMA))
		b.WriteByte(',')
		b.WriteString(strconv.FormatBool(d.Health))
		if nine {
			b.WriteByte(',')
			b.WriteString(strconv.FormatUint(uint64(d.Index), 10))
			b.WriteByte(',')
			b.WriteString(d.Mode)
		}
		b.WriteByte(':')
	}
	return b.String(), nil
}
