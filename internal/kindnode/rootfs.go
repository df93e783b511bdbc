package kindnode

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Debian's suite and debootstrap variant of the node's root filesystem.
const (
	debianSuite   = "bookworm"
	debootVariant = "minbase"
)

// rootfsPackages are the Debian packages of the node beyond minbase: what
// kind's base image installs that bookworm has (containerd and runc come
// from Debian here; kind builds its own).
var rootfsPackages = []string{
	"systemd", "systemd-sysv", "dbus", "containerd", "runc",
	"conntrack", "iptables", "nftables", "iproute2", "ethtool", "util-linux", "mount", "kmod",
	"libseccomp2", "pigz", "bash", "ca-certificates", "procps", "e2fsprogs", "socat", "iputils-ping",
}

// rootfsTrim are run in the fresh root filesystem (sh -c, in its folder):
// no documentation or package lists, and only the systemd units kind's
// base image keeps (every enabled unit is removed; the image enables its
// own); journald does not read the host's kernel log.
const rootfsTrim = `set -eu
rm -rf usr/share/doc/* usr/share/man/* usr/share/locale/* usr/share/info/* var/cache/apt/* var/lib/apt/lists/* var/log/*.log
rm -f lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service
rm -f lib/systemd/system/multi-user.target.wants/* etc/systemd/system/*.wants/* lib/systemd/system/local-fs.target.wants/*
rm -f lib/systemd/system/sockets.target.wants/*udev* lib/systemd/system/sockets.target.wants/*initctl* lib/systemd/system/basic.target.wants/*
echo ReadKMsg=no >>etc/systemd/journald.conf
`

// rootfsKey hashes what decides the root filesystem.
func rootfsKey() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%s", debianSuite, debootVariant, strings.Join(rootfsPackages, ","), rootfsTrim)
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// rootfs returns the cached tar of the node's root filesystem, making it
// with debootstrap first when the cache has none.
func (b *Builder) rootfs(ctx context.Context, cache string) (string, error) {
	tarPath := filepath.Join(cache, "rootfs-"+debianSuite+"-"+rootfsKey()+".tar")
	if _, err := os.Stat(tarPath); err == nil {
		b.logf("root filesystem: %s (cached)", tarPath)
		return tarPath, nil
	}
	if _, err := lookPath("debootstrap"); err != nil {
		return "", fmt.Errorf("%w: debootstrap is not installed (apt-get install debootstrap)", ErrPrerequisite)
	}
	if _, err := lookPath("unshare"); err != nil {
		return "", fmt.Errorf("%w: unshare is not installed (apt-get install util-linux)", ErrPrerequisite)
	}
	dir, err := os.MkdirTemp(cache, ".rootfs-")
	if err != nil {
		return "", fmt.Errorf("kindnode: %w", err)
	}
	defer os.RemoveAll(dir)
	mirror := b.mirror()
	b.logf("root filesystem: debootstrap %s from %s (%d packages, about a minute or two) ...", debianSuite, mirror, len(rootfsPackages))
	stop := b.ticker("debootstrap")
	// debootstrap mounts /proc and /sys inside the target while it installs: in a mount namespace
	// of its own (unshare -m, private propagation) neither this machine's mount table nor a
	// snapshot of it taken meanwhile (TestKubeletNodes, in the same make test) ever sees them,
	// and a killed debootstrap leaves none behind.
	err = b.run(ctx, "", "unshare", "--mount", "--propagation", "private",
		"debootstrap", "--variant="+debootVariant, "--include="+strings.Join(rootfsPackages, ","), debianSuite, dir, mirror)
	stop()
	if err != nil {
		return "", err
	}
	if err := b.run(ctx, dir, "sh", "-c", rootfsTrim); err != nil {
		return "", err
	}
	tmp := tarPath + ".tmp"
	if err := b.run(ctx, "", "tar", "--numeric-owner", "--xattrs", "-C", dir, "-cf", tmp, "."); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, tarPath); err != nil {
		return "", fmt.Errorf("kindnode: %w", err)
	}
	return tarPath, nil
}

// mirror is $TENANTKIT_DEBIAN_MIRROR, else the first Debian archive apt's
// sources name (not the security archive), else deb.debian.org.
func (b *Builder) mirror() string {
	if b.Mirror != "" {
		return b.Mirror
	}
	if m := os.Getenv("TENANTKIT_DEBIAN_MIRROR"); m != "" {
		return m
	}
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*")
	for _, f := range append([]string{"/etc/apt/sources.list"}, files...) {
		if m := aptMirror(f); m != "" {
			return m
		}
	}
	return "http://deb.debian.org/debian"
}

// aptMirror reads one apt sources file (one-line or deb822 format).
func aptMirror(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		var uri string
		switch {
		case len(fields) >= 3 && fields[0] == "deb":
			uri = fields[1]
			if strings.HasPrefix(uri, "[") {
				uri = fields[2]
			}
		case len(fields) >= 2 && fields[0] == "URIs:":
			uri = fields[1]
		}
		if uri != "" && !strings.Contains(uri, "security") && strings.HasPrefix(uri, "http") {
			return uri
		}
	}
	return ""
}
