package daemon

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kruise-addon/kruise-addon/daemon/cri"
)

// fakeCRI answers the calls detection needs, and pulls into memory for the simulated nodes.
type fakeCRI struct {
	criv1.UnimplementedRuntimeServiceServer
	criv1.UnimplementedImageServiceServer
	name string

	mu     sync.Mutex
	pulled map[string]int
}

func (f *fakeCRI) PullImage(_ context.Context, req *criv1.PullImageRequest) (*criv1.PullImageResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pulled == nil {
		f.pulled = map[string]int{}
	}
	f.pulled[req.GetImage().GetImage()]++
	return &criv1.PullImageResponse{ImageRef: "sha256:fake"}, nil
}

func (f *fakeCRI) ImageStatus(_ context.Context, req *criv1.ImageStatusRequest) (*criv1.ImageStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pulled[req.GetImage().GetImage()] == 0 {
		return &criv1.ImageStatusResponse{}, nil
	}
	return &criv1.ImageStatusResponse{Image: &criv1.Image{Id: "sha256:fake", RepoTags: []string{req.GetImage().GetImage()}}}, nil
}

func (f *fakeCRI) ListContainers(context.Context, *criv1.ListContainersRequest) (*criv1.ListContainersResponse, error) {
	return &criv1.ListContainersResponse{}, nil
}

func (f *fakeCRI) pulls(ref string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pulled[ref]
}

func (f *fakeCRI) Version(context.Context, *criv1.VersionRequest) (*criv1.VersionResponse, error) {
	return &criv1.VersionResponse{Version: "0.1.0", RuntimeName: f.name, RuntimeVersion: "9.9.9", RuntimeApiVersion: "v1"}, nil
}

func (f *fakeCRI) ListImages(context.Context, *criv1.ListImagesRequest) (*criv1.ListImagesResponse, error) {
	return &criv1.ListImagesResponse{}, nil
}

// serveFakeCRI listens on path until the test ends.
func serveFakeCRI(t *testing.T, path, runtimeName string) *fakeCRI {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	f := &fakeCRI{name: runtimeName}
	criv1.RegisterRuntimeServiceServer(s, f)
	criv1.RegisterImageServiceServer(s, f)
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)
	return f
}

// shortDir is a temp dir with a path short enough for unix sockets.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/tmp", "kdp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

type detected struct {
	Name, RuntimeName, Endpoint string
}

func detect(t *testing.T, hostVarRun, socketFile string) (detected, error) {
	t.Helper()
	r, err := cri.Detect(context.Background(), hostVarRun, socketFile)
	if err != nil {
		return detected{}, err
	}
	defer r.Close()
	return detected{r.Name, r.RuntimeName, r.Endpoint}, nil
}

func TestDetectionFindsRealContainerd(t *testing.T) {
	got, err := detect(t, ctrd.base, "")
	if err != nil {
		t.Fatal(err)
	}
	want := detected{Name: "containerd", RuntimeName: "containerd", Endpoint: ctrd.socket}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("detected runtime (-want +got):\n%s", diff)
	}
}

func TestDetectionFakeCRIAsCriDockerd(t *testing.T) {
	dir := shortDir(t)
	serveFakeCRI(t, filepath.Join(dir, "cri-dockerd.sock"), "docker")
	// A stale containerd socket file comes first in the probe order but does not answer.
	if err := os.WriteFile(filepath.Join(dir, "containerd.sock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := detect(t, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	want := detected{Name: "cri-dockerd", RuntimeName: "docker", Endpoint: filepath.Join(dir, "cri-dockerd.sock")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("detected runtime (-want +got):\n%s", diff)
	}
}

func TestDetectionSocketFileWins(t *testing.T) {
	dir := shortDir(t)
	fake := filepath.Join(dir, "cri-dockerd", "cri-dockerd.sock")
	serveFakeCRI(t, fake, "docker")
	tests := []struct {
		name       string
		socketFile string
	}{
		{name: "an absolute socket file is used although containerd.sock answers in the run dir", socketFile: fake},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := detect(t, ctrd.base, tt.socketFile)
			if err != nil {
				t.Fatal(err)
			}
			want := detected{Name: "cri-dockerd", RuntimeName: "docker", Endpoint: fake}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("detected runtime (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("a relative socket file is taken under the run dir", func(t *testing.T) {
		got, err := detect(t, dir, "cri-dockerd/cri-dockerd.sock")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(detected{Name: "cri-dockerd", RuntimeName: "docker", Endpoint: fake}, got); diff != "" {
			t.Errorf("detected runtime (-want +got):\n%s", diff)
		}
	})
}

func TestDetectionNoSocketNamesEveryPath(t *testing.T) {
	dir := shortDir(t)
	_, err := detect(t, dir, "")
	if err == nil {
		t.Fatal("detection in an empty run dir succeeded")
	}
	for _, c := range cri.Candidates(dir) {
		if !strings.Contains(err.Error(), c.Path) {
			t.Errorf("error %q does not name %s", err, c.Path)
		}
	}
}

func TestDaemonServesRuntimeMetricAndHealth(t *testing.T) {
	base := "http://" + daemonAddr.String()
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz status %d, want 200", resp.StatusCode)
	}
	resp, err = http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	want := `kruise_daemon_cri_runtime_info{endpoint="` + ctrd.socket + `",runtime="containerd",runtime_name="containerd",runtime_version="`
	if !strings.Contains(string(body), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}
