package localenv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cozystack/tenantkit/internal/process"
)

// seaweedStopGrace is how long weed mini gets to shut down after SIGTERM:
// it drains S3 and the admin first (up to 10 s), then filer, volume and
// master.
const seaweedStopGrace = 20 * time.Second

// seaweedPorts are the loopback ports one `weed mini` process listens on.
// Every one is set explicitly: weed's defaults are fixed ports (8333, 9333,
// ...) and gRPC ports at HTTP port + 10000, which collide between parallel
// tests.
type seaweedPorts struct {
	s3, s3GRPC         int
	master, masterGRPC int
	volume, volumeGRPC int
	filer, filerGRPC   int
	admin, adminGRPC   int
	webdav             int // disabled, but weed still checks the port
}

// startSeaweedFS starts `weed mini` with S3 serving HTTPS only on one port
// (with a certificate and no -s3.port.https, weed serves TLS on -s3.port)
// and the root credentials as its static admin identity. Iceberg, Lance,
// WebDAV, the admin UI, telemetry and the legacy admin port are off; the
// admin server and its maintenance worker cannot be turned off and listen
// on loopback too.
func (s *S3Server) startSeaweedFS(bin string, t s3TLS) error {
	p, err := freeSeaweedPorts()
	if err != nil {
		return err
	}
	s.Endpoint = fmt.Sprintf("127.0.0.1:%d", p.s3)
	s.URL = "https://" + s.Endpoint
	s.cleanup = func() error { return removeSeaweedSockets(p) }
	s.proc, err = process.Start(process.Config{
		Name: s.Name, Path: bin,
		Args: append([]string{"mini"}, seaweedArgs(filepath.Join(s.Dir, "data"), p, t)...),
		// weed's S3 gateway turns AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY
		// into a static admin identity; the environment keeps them out of
		// the process listing.
		Env: []string{"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey},
		// weed reads security.toml and friends from its working directory.
		Dir:       s.Dir,
		LogPath:   filepath.Join(s.Dir, s.Name+".log"),
		StopGrace: seaweedStopGrace,
	})
	return err
}

// seaweedArgs are the `weed mini` flags, checked against `weed mini -h` of
// weed 4.53.
func seaweedArgs(dataDir string, p seaweedPorts, t s3TLS) []string {
	port := strconv.Itoa
	return []string{
		"-dir=" + dataDir,
		"-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-s3.port=" + port(p.s3), "-s3.port.grpc=" + port(p.s3GRPC),
		"-s3.cert.file=" + t.cert, "-s3.key.file=" + t.key,
		// A tenant's credentials never create buckets by writing to them;
		// neither do the root credentials here (as with versitygw).
		"-s3.autoCreateBucket=false",
		"-s3.port.iceberg=0", "-s3.port.lance=0",
		"-master.port=" + port(p.master), "-master.port.grpc=" + port(p.masterGRPC),
		"-master.telemetry=false",
		"-volume.port=" + port(p.volume), "-volume.port.grpc=" + port(p.volumeGRPC),
		"-filer.port=" + port(p.filer), "-filer.port.grpc=" + port(p.filerGRPC),
		"-webdav=false", "-webdav.port=" + port(p.webdav),
		"-admin.ui=false", "-admin.port=" + port(p.admin), "-admin.port.grpc=" + port(p.adminGRPC),
		"-admin.port.legacy=0",
	}
}

func freeSeaweedPorts() (seaweedPorts, error) {
	ports, err := FreePorts(11)
	if err != nil {
		return seaweedPorts{}, err
	}
	return seaweedPorts{
		s3: ports[0], s3GRPC: ports[1],
		master: ports[2], masterGRPC: ports[3],
		volume: ports[4], volumeGRPC: ports[5],
		filer: ports[6], filerGRPC: ports[7],
		admin: ports[8], adminGRPC: ports[9],
		webdav: ports[10],
	}, nil
}

// removeSeaweedSockets removes the Unix sockets weed mini creates in /tmp
// (fixed paths named after the ports; weed removes them on a clean exit but
// not when killed).
func removeSeaweedSockets(p seaweedPorts) error {
	paths := []string{
		fmt.Sprintf("/tmp/seaweedfs-master-grpc-%d.sock", p.masterGRPC),
		fmt.Sprintf("/tmp/seaweedfs-volume-grpc-%d.sock", p.volumeGRPC),
		fmt.Sprintf("/tmp/seaweedfs-filer-grpc-%d.sock", p.filerGRPC),
		fmt.Sprintf("/tmp/seaweedfs-s3-grpc-%d.sock", p.s3GRPC),
		fmt.Sprintf("/tmp/seaweedfs-admin-grpc-%d.sock", p.adminGRPC),
		fmt.Sprintf("/tmp/seaweedfs-filer-%d.sock", p.filer),
		fmt.Sprintf("/tmp/seaweedfs-s3-%d.sock", p.s3),
	}
	var errs []error
	for _, path := range paths {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode().Type() != fs.ModeSocket {
			continue
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
