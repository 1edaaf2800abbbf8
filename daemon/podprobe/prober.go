package podprobe

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// maxMessageLength bounds the probe output kept in status, as 1.8 does.
const maxMessageLength = 1024

// Prober runs one probe once.
type Prober struct {
	// Runtime runs exec probes; nil fails them.
	Runtime criv1.RuntimeServiceClient
}

// Probe runs spec against the container with bare ID containerID in a pod at podIP, and
// returns Succeeded or Failed with the message to record. Probes time out after
// timeoutSeconds (1 when unset).
func (p Prober) Probe(ctx context.Context, spec *appsv1alpha1.ContainerProbeSpec, containerID, podIP string) (appsv1alpha1.ProbeState, string) {
	timeout := time.Duration(max(spec.TimeoutSeconds, 1)) * time.Second
	var ok bool
	var msg string
	switch {
	case spec.Exec != nil:
		ok, msg = p.exec(ctx, containerID, spec.Exec.Command, timeout)
	case spec.TCPSocket != nil:
		ok, msg = tcpProbe(ctx, hostOr(spec.TCPSocket.Host, podIP), spec.TCPSocket.Port.IntValue(), timeout)
	case spec.HTTPGet != nil:
		ok, msg = httpProbe(ctx, spec.HTTPGet, podIP, timeout)
	default:
		ok, msg = false, "the probe has no exec, tcpSocket or httpGet handler"
	}
	if len(msg) > maxMessageLength {
		msg = msg[:maxMessageLength]
	}
	if ok {
		return appsv1alpha1.ProbeSucceeded, msg
	}
	return appsv1alpha1.ProbeFailed, msg
}

func hostOr(host, podIP string) string {
	if host != "" {
		return host
	}
	return podIP
}

// exec runs command in the container; it succeeds when the command exits 0. The message is the
// command's output.
func (p Prober) exec(ctx context.Context, containerID string, command []string, timeout time.Duration) (bool, string) {
	if p.Runtime == nil {
		return false, "no container runtime to exec in"
	}
	ctx, cancel := context.WithTimeout(ctx, timeout+time.Second)
	defer cancel()
	resp, err := p.Runtime.ExecSync(ctx, &criv1.ExecSyncRequest{ContainerId: containerID, Cmd: command, Timeout: int64(timeout / time.Second)})
	if err != nil {
		return false, fmt.Sprintf("exec %q: %v", strings.Join(command, " "), err)
	}
	out := strings.TrimSpace(string(resp.GetStdout()) + string(resp.GetStderr()))
	if resp.GetExitCode() != 0 {
		if out == "" {
			out = fmt.Sprintf("command %q exited with %d", strings.Join(command, " "), resp.GetExitCode())
		}
		return false, out
	}
	return true, out
}

// tcpProbe succeeds when a TCP connection to host:port opens.
func tcpProbe(ctx context.Context, host string, port int, timeout time.Duration) (bool, string) {
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return false, err.Error()
	}
	_ = conn.Close()
	return true, ""
}

// httpProbe succeeds on a status from 200 to 399, as the kubelet's HTTP probe does.
func httpProbe(ctx context.Context, h *corev1.HTTPGetAction, podIP string, timeout time.Duration) (bool, string) {
	scheme := strings.ToLower(string(h.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	path := h.Path
	if path == "" {
		path = "/"
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(hostOr(h.Host, podIP), strconv.Itoa(h.Port.IntValue())), Path: path}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return false, err.Error()
	}
	for _, hd := range h.HTTPHeaders {
		if strings.EqualFold(hd.Name, "host") {
			req.Host = hd.Value
			continue
		}
		req.Header.Add(hd.Name, hd.Value)
	}
	// No redirects are followed and no keep-alive is kept: each probe is one fresh request. Like
	// the kubelet's probes, https does not verify the pod's certificate: the probe asks whether
	// the server answers, and pods rarely serve a certificate for their IP.
	c := &http.Client{
		Transport:     &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // see above
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := c.Do(req)
	if err != nil {
		return false, err.Error()
	}
	_ = resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 400 {
		return true, ""
	}
	return false, fmt.Sprintf("HTTP probe failed with statuscode: %d", resp.StatusCode)
}
