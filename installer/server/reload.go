package server

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// fileStamp tells whether a file changed: another file (a rename over it, as a Secret volume
// or a config tool writes), another size or another modification time.
type fileStamp struct {
	info    os.FileInfo
	size    int64
	modTime time.Time
}

func stampOf(path string) (fileStamp, error) {
	st, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{info: st, size: st.Size(), modTime: st.ModTime()}, nil
}

func (s fileStamp) same(o fileStamp) bool {
	return s.info != nil && o.info != nil && os.SameFile(s.info, o.info) && s.size == o.size && s.modTime.Equal(o.modTime)
}

// reloaded is what files hold, read again when one of them changed on disk, checked at each
// use: no restart, and no watch that a rename could lose. A change that does not load keeps
// the last good value, and the reason is logged once per change.
type reloaded[T any] struct {
	what  string
	paths []string
	load  func() (T, error)
	log   logr.Logger

	mu     sync.Mutex
	stamps []fileStamp
	value  T
}

// newReloaded loads the files once; that first load must succeed.
func newReloaded[T any](what string, log logr.Logger, load func() (T, error), paths ...string) (*reloaded[T], error) {
	r := &reloaded[T]{what: what, paths: paths, load: load, log: log}
	stamps, err := r.stampsNow()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if r.value, err = load(); err != nil {
		return nil, err
	}
	r.stamps = stamps
	return r, nil
}

func (r *reloaded[T]) stampsNow() ([]fileStamp, error) {
	out := make([]fileStamp, len(r.paths))
	for k, p := range r.paths {
		var err error
		if out[k], err = stampOf(p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// current is the value of the files as they are now, or the last good one.
func (r *reloaded[T]) current() T {
	r.mu.Lock()
	defer r.mu.Unlock()
	stamps, err := r.stampsNow()
	if err != nil {
		// A file being replaced can be missing for an instant; the next use looks again.
		return r.value
	}
	changed := false
	for k := range stamps {
		if !stamps[k].same(r.stamps[k]) {
			changed = true
		}
	}
	if !changed {
		return r.value
	}
	r.stamps = stamps
	v, err := r.load()
	if err != nil {
		r.log.Error(err, "Changed file not reloaded; the previous one stays in use until it is fixed", "what", r.what, "files", r.paths)
		return r.value
	}
	r.value = v
	r.log.Info("Changed file reloaded", "what", r.what, "files", r.paths)
	return v
}

// AccessFile is the tokens file, read again at the next request after it changed on disk.
type AccessFile struct{ r *reloaded[*Access] }

// LoadAccessFile reads the tokens file, which must be valid now; a later change that is not
// valid keeps the previous callers, and log says why.
func LoadAccessFile(path string, log logr.Logger) (*AccessFile, error) {
	r, err := newReloaded("tokens file", log, func() (*Access, error) { return LoadAccess(path) }, path)
	if err != nil {
		return nil, err
	}
	return &AccessFile{r: r}, nil
}

// current is the tokens file as it is now, or as it last was valid.
func (f *AccessFile) current() *Access { return f.r.current() }

// certificateFiles is the serving certificate and key, read again at the next TLS handshake
// after either changed on disk.
func certificateFiles(certFile, keyFile string, log logr.Logger) (*reloaded[*tls.Certificate], error) {
	return newReloaded("serving certificate", log, func() (*tls.Certificate, error) {
		c, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		return &c, nil
	}, certFile, keyFile)
}
