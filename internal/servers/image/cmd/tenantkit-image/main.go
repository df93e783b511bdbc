// Command tenantkit-image builds a container image tarball offline for
// tenantkit's local environment, with github.com/google/go-containerregistry:
// one layer holding the given host files, for linux on the host's
// architecture, written in the `docker save` format that `ctr images import`
// and `docker load` read.
//
//	tenantkit-image -o pause.tar -tag registry.k8s.io/pause:3.10 \
//	    -add ./pause=/pause -entrypoint /pause
//
// With -layer, a prepared tar file (a whole root filesystem, for example)
// is the image's first layer, below the one holding the -add files.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"strings"
	"time"

	"compress/gzip"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// errUsage marks a command line error.
var errUsage = errors.New("usage")

// list is a repeatable flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

// options are the parsed flags.
type options struct {
	out        string
	tags       list
	adds       list
	env        list
	entrypoint string
	layer      string
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "tenantkit-image:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

func run(args []string) error {
	var o options
	fs := flag.NewFlagSet("tenantkit-image", flag.ContinueOnError)
	fs.StringVar(&o.out, "o", "", "output tarball `file` (required)")
	fs.Var(&o.tags, "tag", "image `name`, for example registry.k8s.io/pause:3.10 (repeatable, at least one)")
	fs.Var(&o.adds, "add", "`src=dst`: host file src at path dst in the image, mode 0755 (repeatable)")
	fs.Var(&o.env, "env", "`K=V` in the image's environment (repeatable)")
	fs.StringVar(&o.entrypoint, "entrypoint", "", "the image's entrypoint, a `path` inside the image")
	fs.StringVar(&o.layer, "layer", "", "a tar `file` that is the image's first layer, below the -add files")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if o.out == "" || len(o.tags) == 0 || fs.NArg() != 0 {
		fs.Usage()
		return fmt.Errorf("%w: -o and at least one -tag are required, and no arguments", errUsage)
	}
	img, err := build(o)
	if err != nil {
		return err
	}
	refs := map[name.Reference]v1.Image{}
	for _, t := range o.tags {
		tag, err := name.NewTag(t)
		if err != nil {
			return fmt.Errorf("%w: -tag %q: %w", errUsage, t, err)
		}
		refs[tag] = img
	}
	if err := tarball.MultiRefWriteToFile(o.out, refs); err != nil {
		return fmt.Errorf("write %s: %w", o.out, err)
	}
	return nil
}

// build makes the image: one layer with the added files, and the config.
func build(o options) (v1.Image, error) {
	layerTar, err := layerBytes(o.adds)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	base := empty.Image
	if o.layer != "" {
		first, err := tarball.LayerFromFile(o.layer, tarball.WithCompressionLevel(gzip.BestSpeed), tarball.WithCompressedCaching)
		if err != nil {
			return nil, fmt.Errorf("-layer: %w", err)
		}
		if base, err = mutate.AppendLayers(base, first); err != nil {
			return nil, fmt.Errorf("-layer: %w", err)
		}
	}
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Env = append(cf.Config.Env, o.env...)
	if o.entrypoint != "" {
		cf.Config.Entrypoint = []string{o.entrypoint}
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return img, nil
}

// layerBytes writes the layer's tar: for each -add, its parent folders
// (once each) and the file, with fixed times so that equal inputs give an
// equal layer.
func layerBytes(adds []string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, a := range adds {
		src, dst, ok := strings.Cut(a, "=")
		dst = strings.TrimPrefix(path.Clean("/"+dst), "/")
		if !ok || src == "" || dst == "" {
			return nil, fmt.Errorf("%w: -add %q: want src=dst", errUsage, a)
		}
		if err := addDirs(tw, path.Dir(dst), dirs); err != nil {
			return nil, err
		}
		if err := addFile(tw, src, dst); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return buf.Bytes(), nil
}

// addDirs writes a folder entry for dir and each of its parents not yet
// written, outermost first.
func addDirs(tw *tar.Writer, dir string, done map[string]bool) error {
	if dir == "." || dir == "/" || done[dir] {
		return nil
	}
	if err := addDirs(tw, path.Dir(dir), done); err != nil {
		return err
	}
	done[dir] = true
	h := &tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: time.Unix(0, 0)}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("layer: %w", err)
	}
	return nil
}

// addFile copies the host file src into the layer at dst, mode 0755.
func addFile(tw *tar.Writer, src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("-add: %w", err)
	}
	h := &tar.Header{Typeflag: tar.TypeReg, Name: dst, Mode: 0o755, Size: int64(len(data)), ModTime: time.Unix(0, 0)}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("layer: %w", err)
	}
	if _, err := tw.Write(data); err != nil {
		return fmt.Errorf("layer: %w", err)
	}
	return nil
}
