package installer

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// runtimeInfoMetric is the gauge kruise-daemon publishes on its /metrics for the CRI runtime it
// detected on its node, labelled runtime, runtime_name, runtime_version and endpoint.
const runtimeInfoMetric = "kruise_daemon_cri_runtime_info"

// Bounds of status reading the daemons' metrics through the apiserver's pod proxy.
const (
	runtimeLookTimeout = 3 * time.Second
	runtimeLookWorkers = 8
)

// DaemonRuntime is the container runtime the daemon detected on its node.
type DaemonRuntime struct {
	// Name is the daemon's name for the socket it found: containerd, cri-o or cri-dockerd.
	Name string `json:"name"`
	// RuntimeName and RuntimeVersion are what the runtime reports about itself over CRI.
	RuntimeName    string `json:"runtimeName,omitempty"`
	RuntimeVersion string `json:"runtimeVersion,omitempty"`
	// Endpoint is the socket the daemon talks to.
	Endpoint string `json:"endpoint,omitempty"`
}

// String renders "containerd (containerd 1.7.2, unix:///hostvarrun/containerd/containerd.sock)".
func (r DaemonRuntime) String() string {
	return fmt.Sprintf("%s (%s %s, %s)", r.Name, r.RuntimeName, r.RuntimeVersion, r.Endpoint)
}

// parseRuntimeInfo finds the daemon's runtime gauge in a Prometheus text exposition.
func parseRuntimeInfo(body string) (DaemonRuntime, error) {
	for _, line := range strings.Split(body, "\n") {
		rest, ok := strings.CutPrefix(line, runtimeInfoMetric+"{")
		if !ok {
			continue
		}
		labels, err := parseLabels(rest)
		if err != nil {
			return DaemonRuntime{}, fmt.Errorf("%s: %w", runtimeInfoMetric, err)
		}
		return DaemonRuntime{Name: labels["runtime"], RuntimeName: labels["runtime_name"], RuntimeVersion: labels["runtime_version"], Endpoint: labels["endpoint"]}, nil
	}
	return DaemonRuntime{}, fmt.Errorf("the daemon's metrics have no %s: it has not detected a runtime", runtimeInfoMetric)
}

// parseLabels reads `a="x",b="y"} 1` up to the closing brace.
func parseLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	for {
		s = strings.TrimLeft(s, ", ")
		if strings.HasPrefix(s, "}") {
			return out, nil
		}
		name, rest, ok := strings.Cut(s, "=")
		if !ok || !strings.HasPrefix(rest, `"`) {
			return nil, fmt.Errorf("malformed labels at %q", s)
		}
		// The value is a Go-style quoted string: find its closing quote, skipping escapes.
		end := 1
		for end < len(rest) && rest[end] != '"' {
			if rest[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(rest) {
			return nil, fmt.Errorf("unterminated label value at %q", rest)
		}
		v, err := strconv.Unquote(rest[:end+1])
		if err != nil {
			return nil, fmt.Errorf("label %s: %w", name, err)
		}
		out[name] = v
		s = rest[end+1:]
	}
}

// daemonRuntimes reads, through the apiserver's pod proxy, the runtime each ready daemon pod
// publishes, a few pods at a time. A daemon that cannot be read gets an error saying why, not
// a guess.
func (i *Installer) daemonRuntimes(ctx context.Context, pods []corev1.Pod, nodes []DaemonNode) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtimeLookWorkers)
	for k := range pods {
		p := &pods[k]
		if !nodes[k].Ready {
			nodes[k].RuntimeError = "the daemon pod is not ready"
			continue
		}
		port := daemonPort(p)
		if port == "" {
			nodes[k].RuntimeError = "the daemon pod declares no http port"
			continue
		}
		wg.Add(1)
		go func(n *DaemonNode) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			lctx, cancel := context.WithTimeout(ctx, runtimeLookTimeout)
			defer cancel()
			body, err := i.kube.CoreV1().Pods(p.Namespace).ProxyGet("http", p.Name, port, "/metrics", nil).DoRaw(lctx)
			if err != nil {
				n.RuntimeError = fmt.Sprintf("cannot read the daemon's metrics through the apiserver: %v", err)
				return
			}
			rt, err := parseRuntimeInfo(string(body))
			if err != nil {
				n.RuntimeError = err.Error()
				return
			}
			n.Runtime = &rt
		}(&nodes[k])
	}
	wg.Wait()
}

// daemonPort is the daemon container's http port, which serves /metrics.
func daemonPort(p *corev1.Pod) string {
	for _, c := range p.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.Name == "http" {
				return strconv.Itoa(int(cp.ContainerPort))
			}
		}
	}
	return ""
}

// DaemonNode is the daemon on one node.
type DaemonNode struct {
	Node  string `json:"node"`
	Pod   string `json:"pod"`
	Ready bool   `json:"ready"`
	// Runtime is the container runtime the daemon detected on the node, as it publishes it;
	// nil with RuntimeError saying why when it cannot be read.
	Runtime      *DaemonRuntime `json:"runtime,omitempty"`
	RuntimeError string         `json:"runtimeError,omitempty"`
}
