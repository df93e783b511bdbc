package kindnode

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/cozystack/tenantkit/internal/serverbin"
)

// enabledUnits are the systemd units the node starts (kind's, plus the
// image import); maskedUnits never run: binfmt and sysctl would write
// host-wide settings.
var (
	enabledUnits = []string{"containerd.service", "kubelet.service", "undo-mount-hacks.service", "tenantkit-images.service"}
	maskedUnits  = []string{"systemd-binfmt.service", "systemd-sysctl.service"}
)

// build assembles the image and imports it into docker as img.
func (b *Builder) build(ctx context.Context, cache, img string) error {
	all := serverbin.KindNode()
	b.logf("programs: %d (serverbin builds the missing ones) ...", len(all))
	paths, err := b.servers().Build(ctx, all...)
	if err != nil {
		return err
	}
	bin := map[string]string{}
	for i, s := range all {
		bin[s.Name] = paths[i]
	}
	rootfs, err := b.rootfs(ctx, cache)
	if err != nil {
		return err
	}
	stage, err := os.MkdirTemp(cache, ".stage-")
	if err != nil {
		return fmt.Errorf("kindnode: %w", err)
	}
	defer os.RemoveAll(stage)
	root := filepath.Join(stage, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		return fmt.Errorf("kindnode: %w", err)
	}
	b.logf("node filesystem: root filesystem, tenantkit's files, %d programs ...", len(nodeBins()))
	if err := b.run(ctx, "", "tar", "--numeric-owner", "--xattrs", "-xpf", rootfs, "-C", root); err != nil {
		return err
	}
	if err := installNode(root, bin); err != nil {
		return err
	}
	nodefs := filepath.Join(stage, "nodefs.tar")
	if err := b.run(ctx, "", "tar", "--numeric-owner", "--xattrs", "--exclude=./usr/bin/kubelet", "--exclude=./usr/bin/kubeadm",
		"-C", root, "-cf", nodefs, "."); err != nil {
		return err
	}
	if err := b.writeImages(ctx, filepath.Join(root, "kind", "images"), nodefs, bin); err != nil {
		return err
	}
	os.Remove(nodefs)
	return b.dockerImport(ctx, root, img)
}

// installNode writes tenantkit's files, the programs and the units' links
// into the root filesystem at root.
func installNode(root string, bin map[string]string) error {
	names, err := embeddedNames()
	if err != nil {
		return err
	}
	for _, n := range names {
		data, _ := files.ReadFile(n)
		rel := strings.TrimPrefix(n, "files/")
		mode := os.FileMode(0o644)
		if strings.HasPrefix(rel, "usr/local/bin/") || strings.HasPrefix(rel, "kind/bin/") {
			mode = 0o755
		}
		if err := writeFile(filepath.Join(root, rel), data, mode); err != nil {
			return err
		}
	}
	if err := writeFile(filepath.Join(root, "kind", "version"), []byte(KubernetesVersion+"\n"), 0o644); err != nil {
		return err
	}
	for _, nb := range nodeBins() {
		if err := copyFile(bin[nb.bin.Name], filepath.Join(root, nb.path)); err != nil {
			return err
		}
	}
	for _, d := range []string{"etc/kubernetes/manifests", "etc/cni/net.d", "kind/images", "etc/systemd/system/multi-user.target.wants", "usr/lib/modules"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return fmt.Errorf("kindnode: %w", err)
		}
	}
	for _, u := range enabledUnits {
		if err := relink(filepath.Join(root, "etc/systemd/system/multi-user.target.wants", u), "/etc/systemd/system/"+u); err != nil {
			return err
		}
	}
	for _, u := range maskedUnits {
		if err := relink(filepath.Join(root, "etc/systemd/system", u), "/dev/null"); err != nil {
			return err
		}
	}
	return nil
}

// writeImages writes every image archive into dir with tenantkit-image.
func (b *Builder) writeImages(ctx context.Context, dir, nodefs string, bin map[string]string) error {
	tool := bin[serverbin.ImageTool.Name]
	for _, im := range images {
		b.logf("image %s ...", strings.Join(im.tags, ", "))
		args := []string{"-o", filepath.Join(dir, im.file)}
		for _, t := range im.tags {
			args = append(args, "-tag", t)
		}
		if im.nodeTools {
			args = append(args, "-layer", nodefs)
		} else {
			args = append(args, "-add", bin[im.bin.Name]+"="+im.path, "-env", imagePATH)
			if im.entrypoint {
				args = append(args, "-entrypoint", im.path)
			}
		}
		if err := b.run(ctx, "", tool, args...); err != nil {
			return err
		}
	}
	return nil
}

// dockerImport imports the root filesystem as img, with kind's node image
// settings: the entrypoint before systemd. (docker import takes no
// STOPSIGNAL; kind removes its nodes with docker rm -f, which does not
// use it.)
func (b *Builder) dockerImport(ctx context.Context, root, img string) error {
	b.logf("docker import %s ...", img)
	stop := b.ticker("docker import")
	defer stop()
	tarCmd := exec.CommandContext(ctx, "tar", "--numeric-owner", "--xattrs", "-C", root, "-c", ".")
	imp := exec.CommandContext(ctx, "docker", "import",
		"--change", `ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]`,
		"--change", "ENV container=docker",
		"--change", "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"--change", "LABEL io.tenantkit.kind-node="+KubernetesVersion,
		"-", img)
	pipe, err := tarCmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("kindnode: %w", err)
	}
	imp.Stdin = pipe
	var tarErr, impOut strings.Builder
	tarCmd.Stderr = &tarErr
	imp.Stdout, imp.Stderr = &impOut, &impOut
	if err := tarCmd.Start(); err != nil {
		return fmt.Errorf("kindnode: %w", err)
	}
	impErr := imp.Run()
	pipe.Close() // a tar still writing gets EPIPE instead of blocking
	if err := tarCmd.Wait(); err != nil && impErr == nil {
		return fmt.Errorf("%w: tar %s: %w: %s", ErrCommand, root, err, tail(tarErr.String(), 1000))
	}
	if impErr != nil {
		return fmt.Errorf("%w: docker import: %w: %s", ErrCommand, impErr, tail(impOut.String(), 1000))
	}
	return nil
}

func writeFile(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("kindnode: %w", err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("kindnode: %w", err)
	}
	return os.Chmod(path, mode)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("kindnode: %w", err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("kindnode: %w", err)
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return fmt.Errorf("kindnode: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("kindnode: %w", err)
	}
	return out.Close()
}

func relink(path, target string) error {
	os.Remove(path)
	if err := os.Symlink(target, path); err != nil {
		return fmt.Errorf("kindnode: %w", err)
	}
	return nil
}
