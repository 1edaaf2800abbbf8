package cri

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Kubelet figures a stop follows.
const (
	// DefaultGracePeriod is the grace period of a pod that sets none.
	DefaultGracePeriod = 30 * time.Second
	// minimumGracePeriod is what the stop itself gets, however long the hook took.
	minimumGracePeriod = 2 * time.Second
)

// Hook is a container's preStop hook. At most one of Exec and HTTPGet is set; other handler
// kinds are not run.
type Hook struct {
	Exec    *corev1.ExecAction
	HTTPGet *corev1.HTTPGetAction
	// Ports are the container's ports, for an HTTP hook that names its port.
	Ports []corev1.ContainerPort
	// PodIP is where an HTTP hook without a host goes.
	PodIP string
}

// Stopper stops containers the way the kubelet kills one: the preStop hook first, then CRI
// StopContainer with what is left of the grace period. The kubelet then starts the container
// again under the pod's restart policy, with the env it resolves at that moment.
type Stopper struct {
	Runtime    *Runtime
	Clock      clock.PassiveClock
	HTTPClient *http.Client
}

// NewStopper returns a Stopper on rt with the real clock and a plain HTTP client.
func NewStopper(rt *Runtime) *Stopper {
	return &Stopper{Runtime: rt, Clock: clock.RealClock{}, HTTPClient: &http.Client{}}
}

// Stop runs hook, when not nil, then stops rc with what is left of grace (but at least two
// seconds). A failed hook is logged and the stop goes on, as in the kubelet.
func (s *Stopper) Stop(ctx context.Context, rc *Container, hook *Hook, grace time.Duration) error {
	log := klog.FromContext(ctx)
	start := s.Clock.Now()
	if hook != nil {
		if err := s.preStop(ctx, rc, hook, grace); err != nil {
			log.Info("PreStop hook failed", "container", rc.Name, "err", err)
		}
	}
	left := grace - s.Clock.Since(start)
	if left < minimumGracePeriod {
		left = minimumGracePeriod
	}
	log.Info("Stopping container", "container", rc.Name, "containerID", rc.FullID, "grace", left)
	if _, err := s.Runtime.Containers.StopContainer(ctx, &criv1.StopContainerRequest{ContainerId: rc.ID, Timeout: int64(left / time.Second)}); err != nil {
		return fmt.Errorf("stop container %s: %w", rc.ID, err)
	}
	return nil
}

// preStop runs an exec hook through CRI ExecSync, or an HTTP GET against the pod.
func (s *Stopper) preStop(ctx context.Context, rc *Container, h *Hook, grace time.Duration) error {
	switch {
	case h.Exec != nil:
		resp, err := s.Runtime.Containers.ExecSync(ctx, &criv1.ExecSyncRequest{ContainerId: rc.ID, Cmd: h.Exec.Command, Timeout: int64(grace / time.Second)})
		if err != nil {
			return fmt.Errorf("exec preStop: %w", err)
		}
		if resp.GetExitCode() != 0 {
			return fmt.Errorf("exec preStop exited %d: %s", resp.GetExitCode(), resp.GetStderr())
		}
		return nil
	case h.HTTPGet != nil:
		u, err := HookURL(h, rc.Name)
		if err != nil {
			return err
		}
		hctx, cancel := context.WithTimeout(ctx, grace)
		defer cancel()
		req, err := http.NewRequestWithContext(hctx, http.MethodGet, u, nil)
		if err != nil {
			return fmt.Errorf("http preStop: %w", err)
		}
		for _, hd := range h.HTTPGet.HTTPHeaders {
			req.Header.Add(hd.Name, hd.Value)
		}
		resp, err := s.HTTPClient.Do(req)
		if err != nil {
			return fmt.Errorf("http preStop: %w", err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode >= 400 {
			return fmt.Errorf("http preStop: status %d", resp.StatusCode)
		}
		return nil
	}
	return nil
}

// HookURL builds the URL of an HTTP preStop hook of the named container; a named port is looked
// up in the hook's ports, and the host defaults to the pod IP.
func HookURL(h *Hook, container string) (string, error) {
	g := h.HTTPGet
	host := g.Host
	if host == "" {
		host = h.PodIP
	}
	port := g.Port.IntValue()
	if g.Port.Type == intstr.String {
		port = 0
		for _, p := range h.Ports {
			if p.Name == g.Port.StrVal {
				port = int(p.ContainerPort)
			}
		}
	}
	if port <= 0 {
		return "", fmt.Errorf("http preStop: no port %q on container %s", g.Port.String(), container)
	}
	scheme := "http"
	if g.Scheme == corev1.URISchemeHTTPS {
		scheme = "https"
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port)), Path: g.Path}
	return u.String(), nil
}
