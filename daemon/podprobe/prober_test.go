package podprobe

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// portOf is the port of a loopback listener address.
func portOf(t *testing.T, addr string) int32 {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return int32(n)
}

func TestProberNetwork(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.WriteHeader(http.StatusOK)
		case "/moved":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	open := portOf(t, srv.Listener.Addr().String())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := portOf(t, ln.Addr().String())
	_ = ln.Close()

	tcp := func(port int32) *appsv1alpha1.ContainerProbeSpec {
		return &appsv1alpha1.ContainerProbeSpec{Probe: corev1.Probe{ProbeHandler: corev1.ProbeHandler{
			TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port)}}}}
	}
	get := func(port int32, path string) *appsv1alpha1.ContainerProbeSpec {
		return &appsv1alpha1.ContainerProbeSpec{Probe: corev1.Probe{ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(port), Path: path}}}}
	}
	type tcase struct {
		spec *appsv1alpha1.ContainerProbeSpec
		want appsv1alpha1.ProbeState
	}
	cases := map[string]tcase{
		"tcp to a listening port of the pod IP succeeds":   {spec: tcp(open), want: appsv1alpha1.ProbeSucceeded},
		"tcp to a closed port fails":                       {spec: tcp(closed), want: appsv1alpha1.ProbeFailed},
		"http answering 200 succeeds":                      {spec: get(open, "/ok"), want: appsv1alpha1.ProbeSucceeded},
		"http answering a redirect succeeds, unfollowed":   {spec: get(open, "/moved"), want: appsv1alpha1.ProbeSucceeded},
		"http answering 503 fails":                         {spec: get(open, "/down"), want: appsv1alpha1.ProbeFailed},
		"http to a closed port fails":                      {spec: get(closed, "/ok"), want: appsv1alpha1.ProbeFailed},
		"exec without a runtime fails rather than passing": {spec: &appsv1alpha1.ContainerProbeSpec{Probe: corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}}, want: appsv1alpha1.ProbeFailed},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		got, msg := Prober{}.Probe(context.Background(), tc.spec, "", "127.0.0.1")
		if got != tc.want {
			t.Errorf("state = %s (%q), want %s", got, msg, tc.want)
		}
	})
}
