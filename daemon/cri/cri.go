package cri

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Candidate is one socket the probe tries, with the runtime name it stands for.
type Candidate struct {
	Name string
	Path string
}

// Candidates lists the sockets under hostVarRun in the order 1.8 probes them.
func Candidates(hostVarRun string) []Candidate {
	return []Candidate{
		{Name: "containerd", Path: filepath.Join(hostVarRun, "containerd.sock")},
		{Name: "containerd", Path: filepath.Join(hostVarRun, "containerd", "containerd.sock")},
		{Name: "cri-o", Path: filepath.Join(hostVarRun, "crio.sock")},
		{Name: "cri-o", Path: filepath.Join(hostVarRun, "crio", "crio.sock")},
		{Name: "cri-dockerd", Path: filepath.Join(hostVarRun, "cri-dockerd.sock")},
		{Name: "cri-dockerd", Path: filepath.Join(hostVarRun, "cri-dockerd", "cri-dockerd.sock")},
	}
}

// Runtime is a CRI runtime that answered Version and ListImages.
type Runtime struct {
	// Name is the probe's name for the socket: containerd, cri-o or cri-dockerd.
	Name string
	// Endpoint is the socket path.
	Endpoint string
	// RuntimeName and RuntimeVersion are what the runtime reports about itself.
	RuntimeName    string
	RuntimeVersion string
	Images         criv1.ImageServiceClient
	Containers     criv1.RuntimeServiceClient
	conn           *grpc.ClientConn
}

// IDPrefix is the scheme of container IDs in pod status for this runtime (containerd://...).
func (r *Runtime) IDPrefix() string {
	switch r.Name {
	case "cri-dockerd":
		return "docker"
	case "", "unknown":
		return r.RuntimeName
	}
	return r.Name
}

// Close ends the gRPC connection.
func (r *Runtime) Close() error { return r.conn.Close() }

// Detect returns the runtime behind socketFile when it is set (a relative name is taken under
// hostVarRun), or else the first candidate that answers. The error of a failed probe names
// every path it tried and why each one did not count.
func Detect(ctx context.Context, hostVarRun, socketFile string) (*Runtime, error) {
	if socketFile != "" {
		path := socketFile
		if !filepath.IsAbs(path) {
			path = filepath.Join(hostVarRun, socketFile)
		}
		r, err := Dial(ctx, nameForPath(hostVarRun, path), path)
		if err != nil {
			return nil, fmt.Errorf("socket file %s: %w", path, err)
		}
		return r, nil
	}
	var reasons []string
	for _, c := range Candidates(hostVarRun) {
		if _, err := os.Stat(c.Path); err != nil {
			reasons = append(reasons, fmt.Sprintf("%s: not present", c.Path))
			continue
		}
		r, err := Dial(ctx, c.Name, c.Path)
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("%s: %v", c.Path, err))
			continue
		}
		return r, nil
	}
	return nil, fmt.Errorf("no CRI runtime found; tried %s", strings.Join(reasons, "; "))
}

// nameForPath names a socket given by flag after the candidate it matches, if any.
func nameForPath(hostVarRun, path string) string {
	for _, c := range Candidates(hostVarRun) {
		if filepath.Base(c.Path) == filepath.Base(path) {
			return c.Name
		}
	}
	return "unknown"
}

// probeTimeout bounds each of the two calls a candidate must answer.
const probeTimeout = 5 * time.Second

// Dial connects to the socket and keeps it only if it answers CRI v1 Version and ListImages.
func Dial(ctx context.Context, name, path string) (*Runtime, error) {
	conn, err := grpc.NewClient("unix://"+path,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16*1024*1024)))
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	r := &Runtime{
		Name:       name,
		Endpoint:   path,
		Images:     criv1.NewImageServiceClient(conn),
		Containers: criv1.NewRuntimeServiceClient(conn),
		conn:       conn,
	}
	vctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	v, err := r.Containers.Version(vctx, &criv1.VersionRequest{})
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("CRI v1 Version: %w", err)
	}
	if _, err := r.Images.ListImages(vctx, &criv1.ListImagesRequest{}); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("CRI v1 ListImages: %w", err)
	}
	r.RuntimeName, r.RuntimeVersion = v.GetRuntimeName(), v.GetRuntimeVersion()
	if r.Name == "unknown" && r.RuntimeName != "" {
		r.Name = r.RuntimeName
	}
	return r, nil
}

// InfoMetric is a gauge set to 1 for the runtime in use, labelled with its name, version and socket.
func InfoMetric(r *Runtime) prometheus.Collector {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kruise_daemon_cri_runtime_info",
		Help: "The CRI runtime kruise-daemon uses; the value is always 1.",
	}, []string{"runtime", "runtime_name", "runtime_version", "endpoint"})
	g.WithLabelValues(r.Name, r.RuntimeName, r.RuntimeVersion, r.Endpoint).Set(1)
	return g
}
