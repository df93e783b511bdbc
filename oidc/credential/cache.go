package credential

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// cacheMagic starts every cache file; the SHA-256 of the JSON body
// follows it on the first line, so a truncated or edited file is
// recognised and ignored.
const cacheMagic = "tenantkit-oidc-credential v1 "

// maxCacheFile bounds what decodeEntry reads.
const maxCacheFile = 1 << 20

// entry is one cache file: the tokens of one Config key and the record of
// failed sign-ins. A cached ID token is never trusted as it is: Get
// verifies its signature, issuer, audience and expiry every time.
type entry struct {
	// Key is the Config key the file belongs to.
	Key string `json:"key"`
	// IDToken and RefreshToken are the issuer's last tokens.
	IDToken      string `json:"id_token,omitempty"`
	RefreshToken string `json:"refresh_token,omitempty"`
	// Failures counts sign-ins that failed in a row; LastFailure is when
	// the last one failed.
	Failures    int       `json:"failures,omitempty"`
	LastFailure time.Time `json:"last_failure,omitzero"`
}

// errCacheCorrupt is a cache file decodeEntry refuses; Get ignores and
// replaces such a file.
var errCacheCorrupt = errors.New("credential: cache file corrupt")

// encodeEntry returns the file content of e.
func encodeEntry(e entry) ([]byte, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	out := append([]byte(cacheMagic+sumHex(body)+"\n"), body...)
	return append(out, '\n'), nil
}

func sumHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// decodeEntry parses a cache file written by encodeEntry for key; any
// difference (truncation, an edit, another key, unknown fields) is
// errCacheCorrupt.
func decodeEntry(data []byte, key string) (entry, error) {
	if len(data) > maxCacheFile {
		return entry{}, fmt.Errorf("%w: %d bytes", errCacheCorrupt, len(data))
	}
	header, body, ok := bytes.Cut(data, []byte("\n"))
	if !ok || !bytes.HasPrefix(header, []byte(cacheMagic)) {
		return entry{}, fmt.Errorf("%w: no header", errCacheCorrupt)
	}
	want, err := hex.DecodeString(string(header[len(cacheMagic):]))
	body = bytes.TrimSuffix(body, []byte("\n"))
	sum := sha256.Sum256(body)
	if err != nil || !bytes.Equal(want, sum[:]) {
		return entry{}, fmt.Errorf("%w: checksum mismatch", errCacheCorrupt)
	}
	var e entry
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || dec.More() {
		return entry{}, fmt.Errorf("%w: %v", errCacheCorrupt, err)
	}
	if e.Key != key {
		return entry{}, fmt.Errorf("%w: written for another configuration", errCacheCorrupt)
	}
	if e.Failures < 0 {
		return entry{}, fmt.Errorf("%w: negative failure count", errCacheCorrupt)
	}
	return e, nil
}

// store is the cache directory of one user.
type store struct {
	dir string
}

// openStore creates dir (0700) if needed and refuses one that is not a
// private directory of this user; a directory of ours with wider
// permissions is narrowed.
func openStore(dir string) (*store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("credential: cache directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("credential: cache directory: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a directory", ErrCacheInsecure, dir)
	}
	if uid, ok := owner(fi); ok && uid != os.Getuid() {
		return nil, fmt.Errorf("%w: %s belongs to uid %d", ErrCacheInsecure, dir, uid)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return nil, fmt.Errorf("credential: cache directory: %w", err)
		}
	}
	return &store{dir: dir}, nil
}

func (s *store) path(key string) string     { return filepath.Join(s.dir, key+".json") }
func (s *store) lockPath(key string) string { return filepath.Join(s.dir, key+".lock") }

// load returns the entry of key; a missing file is an empty entry, a
// corrupt one an empty entry and the reason.
func (s *store) load(key string) (entry, error) {
	data, err := os.ReadFile(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return entry{Key: key}, nil
	}
	if err != nil {
		return entry{Key: key}, err
	}
	e, err := decodeEntry(data, key)
	if err != nil {
		return entry{Key: key}, err
	}
	return e, nil
}

// save writes e atomically (a 0600 temporary file renamed over the old).
func (s *store) save(e entry) error {
	data, err := encodeEntry(e)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(s.dir, e.Key+".tmp-*")
	if err != nil {
		return fmt.Errorf("credential: write cache: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("credential: write cache: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("credential: write cache: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("credential: write cache: %w", err)
	}
	return os.Rename(f.Name(), s.path(e.Key))
}

// remove deletes the entry of key; a missing one is not an error.
func (s *store) remove(key string) (bool, error) {
	err := os.Remove(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
