package gpushare

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Isolation is how much of HAMi's limits HAMi-core can enforce inside a
// workload image, which depends on the image's C library (HAMi-core
// issue #174, Cozystack's GPU sharing guide).
type Isolation int

const (
	// IsolationFull: memory and compute limits hold.
	IsolationFull Isolation = iota
	// IsolationMemoryOnly: memory limits hold; compute limits fail
	// silently.
	IsolationMemoryOnly
	// IsolationNone: HAMi-core fails to load silently; the workload runs
	// without limits and can take co-located pods' GPU memory.
	IsolationNone
	// IsolationIncompatible: musl images (Alpine) cannot load HAMi-core.
	IsolationIncompatible
)

// String names the isolation level.
func (i Isolation) String() string {
	switch i {
	case IsolationFull:
		return "full (memory and compute)"
	case IsolationMemoryOnly:
		return "memory only (compute limits fail silently)"
	case IsolationNone:
		return "none (HAMi-core does not load)"
	case IsolationIncompatible:
		return "incompatible (musl)"
	}
	return "Isolation(" + strconv.Itoa(int(i)) + ")"
}

// GlibcIsolation maps a glibc version ("2.35") to the isolation HAMi-core
// achieves. The known rows are 2.31 full (Ubuntu 20.04), 2.35 memory only
// (22.04) and 2.39 none (24.04); a version between two rows gets the worse
// of them, so 2.32–2.35 are memory only and anything after 2.35 none;
// versions up to 2.31 are full.
func GlibcIsolation(version string) (Isolation, error) {
	major, minor, ok := strings.Cut(strings.TrimSpace(version), ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if !ok || err1 != nil || err2 != nil || ma < 0 || mi < 0 {
		return 0, fmt.Errorf("glibc version %q: want MAJOR.MINOR: %w", version, ErrInvalidConfig)
	}
	switch {
	case ma < 2 || (ma == 2 && mi <= 31):
		return IsolationFull, nil
	case ma == 2 && mi <= 35:
		return IsolationMemoryOnly, nil
	}
	return IsolationNone, nil
}

var ubuntuRE = regexp.MustCompile(`ubuntu[:\-_ ]?(\d\d\.\d\d)|\b(focal|jammy|noble)\b`)

var ubuntuGlibc = map[string]string{
	"20.04": "2.31", "focal": "2.31",
	"22.04": "2.35", "jammy": "2.35",
	"24.04": "2.39", "noble": "2.39",
}

// ImageIsolation guesses the isolation for a workload image from its name:
// Ubuntu 20.04, 22.04 and 24.04 images (also by codename, and CUDA images
// such as nvidia/cuda:12.4.1-runtime-ubuntu22.04) map through their glibc;
// Alpine images are musl, incompatible. Other images give ErrUnknownImage:
// check their glibc with GlibcIsolation.
func ImageIsolation(image string) (Isolation, error) {
	s := strings.ToLower(image)
	if strings.Contains(s, "alpine") || strings.Contains(s, "musl") {
		return IsolationIncompatible, nil
	}
	if m := ubuntuRE.FindStringSubmatch(s); m != nil {
		key := m[1]
		if key == "" {
			key = m[2]
		}
		if g, ok := ubuntuGlibc[key]; ok {
			return GlibcIsolation(g)
		}
	}
	return 0, fmt.Errorf("image %q: %w", image, ErrUnknownImage)
}
