package daemon

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// sleeperSource is the one program of every test image: it prints its env vars named in
// SLEEPER_SHOW (comma-separated) to its log, then waits for SIGTERM; or, run as
// `sleeper touch <file>`, it writes the file (the exec preStop hook); or, run as
// `sleeper exists <file>`, it exits 0 when the file is there and 1 when not (the exec probe).
const sleeperSource = `package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "touch" {
		if err := os.WriteFile(os.Args[2], []byte("preStop ran\n"), 0o644); err != nil {
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "exists" {
		if _, err := os.Stat(os.Args[2]); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		return
	}
	for _, k := range strings.Split(os.Getenv("SLEEPER_SHOW"), ",") {
		if k != "" {
			fmt.Printf("%s=%s\n", k, os.Getenv(k))
		}
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
`

// buildSleeper compiles sleeperSource into a static binary in dir.
func buildSleeper(dir string) (string, error) {
	src := filepath.Join(dir, "sleeper.go")
	if err := os.WriteFile(src, []byte(sleeperSource), 0o644); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "sleeper")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, src)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build sleeper: %w\n%s", err, b)
	}
	return out, nil
}

// sleeperImage is an image whose only file is /sleeper (plus /extra with the given content, so
// that images can differ) and whose entrypoint is /sleeper.
func sleeperImage(binary []byte, extra string) (v1.Image, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	files := []struct {
		name string
		mode int64
		body []byte
	}{{"sleeper", 0o755, binary}, {"extra", 0o644, []byte(extra)}}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body)), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	raw := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil })
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Config.Entrypoint = []string{"/sleeper"}
	return mutate.ConfigFile(img, cfg)
}

// testRegistry is a loopback OCI registry; with a user set it demands basic auth. It counts
// manifest requests per repository:reference.
type testRegistry struct {
	srv        *httptest.Server
	user, pass string
	mu         sync.Mutex
	manifests  map[string]int
}

// slowRegistryHold is how long the registry holds a request for the slow repository.
const slowRegistryHold = time.Minute

func startRegistry(user, pass string) *testRegistry {
	r := &testRegistry{user: user, pass: pass, manifests: map[string]int{}}
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.user != "" {
			u, p, ok := req.BasicAuth()
			if !ok || u != r.user || p != r.pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		if strings.HasPrefix(req.URL.Path, "/v2/slow/") {
			// Never answers in time: the pull must be cut by the tag's timeout.
			select {
			case <-req.Context().Done():
			case <-time.After(slowRegistryHold):
			}
			http.Error(w, "too late", http.StatusServiceUnavailable)
			return
		}
		if i := strings.Index(req.URL.Path, "/manifests/"); i > 0 && strings.HasPrefix(req.URL.Path, "/v2/") {
			key := req.URL.Path[len("/v2/"):i] + ":" + req.URL.Path[i+len("/manifests/"):]
			r.mu.Lock()
			r.manifests[key]++
			r.mu.Unlock()
		}
		inner.ServeHTTP(w, req)
	}))
	return r
}

// host is the registry's host:port.
func (r *testRegistry) host() string { return strings.TrimPrefix(r.srv.URL, "http://") }

func (r *testRegistry) manifestRequests(repoTag string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.manifests[repoTag]
}

// push writes img as repo:tag and returns the full reference.
func (r *testRegistry) push(img v1.Image, repoTag string) (string, error) {
	ref := r.host() + "/" + repoTag
	tag, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		return "", err
	}
	auth := authn.Anonymous
	if r.user != "" {
		auth = &authn.Basic{Username: r.user, Password: r.pass}
	}
	if err := remote.Write(tag, img, remote.WithAuth(auth)); err != nil {
		return "", fmt.Errorf("push %s: %w", ref, err)
	}
	return ref, nil
}

// containerd runs scripts/containerd/start.sh in a short work dir.
type containerd struct {
	base   string
	socket string
}

// repoRoot is where the project's scripts are, seen from this package.
const repoRoot = "../../.."

func startContainerd(registryHost string) (*containerd, error) {
	base, err := os.MkdirTemp("/tmp", "kd-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(repoRoot, "scripts/containerd/start.sh"))
	cmd.Env = append(os.Environ(), "BASE="+base, "REGISTRY="+registryHost)
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.RemoveAll(base)
		return nil, fmt.Errorf("start containerd: %w\n%s", err, out)
	}
	return &containerd{base: base, socket: filepath.Join(base, "containerd.sock")}, nil
}

func (c *containerd) stop() error {
	cmd := exec.Command(filepath.Join(repoRoot, "scripts/containerd/stop.sh"))
	cmd.Env = append(os.Environ(), "BASE="+c.base)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("stop containerd: %w\n%s", err, out)
	}
	return nil
}

// v1Image names the image type for helpers outside this file.
type v1Image = v1.Image

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// requestCounter counts the GET requests of a client transport, by URL path.
type requestCounter struct {
	mu   sync.Mutex
	gets map[string]int
}

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet {
			c.mu.Lock()
			if c.gets == nil {
				c.gets = map[string]int{}
			}
			c.gets[req.URL.Path]++
			c.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

// count is how many GETs of path were made so far.
func (c *requestCounter) count(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gets[path]
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
