package cli

import (
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kruise-addon/kruise-addon/installer/bundle/testbundle"
	"github.com/kruise-addon/kruise-addon/installer/server/servertest"
)

// hangGuard only stops a test whose command hangs; it asserts nothing about speed. It is far
// longer than the per-request timeout the commands fall back on.
const hangGuard = 3 * time.Minute

// silentServer is an apiserver that accepts TLS and never answers: each handler blocks until
// the test ends.
type silentServer struct {
	kubeconfig string
	// requests receives one value per request the server has accepted.
	requests chan struct{}
}

func newSilentServer(t *testing.T) *silentServer {
	t.Helper()
	done := make(chan struct{})
	s := &silentServer{requests: make(chan struct{}, 1024)}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case s.requests <- struct{}{}:
		default:
		}
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}))
	// Cleanups run last-registered first: release the handlers, then close the server.
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) })

	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["silent"] = &clientcmdapi.Cluster{Server: srv.URL, CertificateAuthorityData: ca}
	cfg.AuthInfos["silent"] = &clientcmdapi.AuthInfo{Token: "test"}
	cfg.Contexts["silent"] = &clientcmdapi.Context{Cluster: "silent", AuthInfo: "silent"}
	cfg.CurrentContext = "silent"
	s.kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, s.kubeconfig); err != nil {
		t.Fatal(err)
	}
	return s
}

type runResult struct {
	code        int
	out, errOut string
}

// runGuarded runs the command line in-process and fails the test if it has not returned within
// hangGuard.
func runGuarded(t *testing.T, ctx context.Context, args []string) runResult {
	t.Helper()
	var out, errOut servertest.Buffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, args, &out, &errOut) }()
	select {
	case code := <-done:
		return runResult{code: code, out: out.String(), errOut: errOut.String()}
	case <-time.After(hangGuard):
		t.Fatalf("%v did not return within %s: it hangs\nstderr so far: %s", args, hangGuard, errOut.String())
		return runResult{}
	}
}

// A cluster that accepts connections and never answers must not hang any command: every request
// has a timeout, and --timeout bounds install as a whole.
func TestSilentClusterDoesNotHang(t *testing.T) {
	cases := map[string]struct {
		args []string
		// wantErr are parts of the error message.
		wantErr []string
	}{
		"status gives up when a request gets no answer": {
			args:    []string{"status"},
			wantErr: []string{"no answer from the cluster within --request-timeout"},
		},
		"preflight gives up when a request gets no answer": {
			args:    []string{"preflight"},
			wantErr: []string{"no answer from the cluster within --request-timeout"},
		},
		"install gives up at --timeout": {
			args:    []string{"install", "--timeout", "5s"},
			wantErr: []string{"did not finish within the timeout of 5s"},
		},
		"upgrade gives up at --timeout": {
			args:    []string{"upgrade", "--timeout", "5s"},
			wantErr: []string{"did not finish within the timeout of 5s"},
		},
		"uninstall gives up at --timeout": {
			args:    []string{"uninstall", "--timeout", "5s"},
			wantErr: []string{"did not finish within the timeout of 5s"},
		},
		"unlock gives up when a request gets no answer": {
			args:    []string{"unlock"},
			wantErr: []string{"no answer from the cluster within --request-timeout"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newSilentServer(t)
			got := runGuarded(t, context.Background(), append(tc.args, "--kubeconfig", s.kubeconfig))
			t.Logf("stderr: %s", got.errOut)
			if diff := cmp.Diff(ExitError, got.code); diff != "" {
				t.Errorf("exit code (-want +got):\n%s\nstderr: %s", diff, got.errOut)
			}
			for _, part := range tc.wantErr {
				if !strings.Contains(got.errOut, part) {
					t.Errorf("stderr lacks %q:\n%s", part, got.errOut)
				}
			}
		})
	}
}

// A signal cancels the command's context (see cmd/kruise-addon); a running command then returns
// with a cancellation error instead of waiting for the cluster. The request timeout is set far
// beyond the guard, so only the cancellation can end these commands.
func TestCancelledCommandReturns(t *testing.T) {
	cases := map[string][]string{
		"status stops when cancelled while the cluster is silent":    {"status"},
		"preflight stops when cancelled while the cluster is silent": {"preflight"},
		"install stops when cancelled while the cluster is silent":   {"install"},
		"upgrade stops when cancelled while the cluster is silent":   {"upgrade"},
		"unlock stops when cancelled while the cluster is silent":    {"unlock"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newSilentServer(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				// Cancel once the command is waiting on the cluster.
				<-s.requests
				cancel()
			}()
			got := runGuarded(t, ctx, append(args, "--kubeconfig", s.kubeconfig, "--request-timeout", "1h"))
			t.Logf("stderr: %s", got.errOut)
			if diff := cmp.Diff(ExitError, got.code); diff != "" {
				t.Errorf("exit code (-want +got):\n%s\nstderr: %s", diff, got.errOut)
			}
			if !strings.Contains(got.errOut, "cancelled") {
				t.Errorf("stderr does not say the command was cancelled:\n%s", got.errOut)
			}
		})
	}
}

// silentRegistry accepts TCP connections on loopback and never reads or answers, until the test
// ends; it returns its host:port.
func silentRegistry(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// A registry that accepts connections and never answers must not hang bundle push, nor an
// install from a bundle (which looks the bundle's images up first): each registry request ends
// at --request-timeout, here far below --timeout.
func TestSilentRegistryDoesNotHang(t *testing.T) {
	file, _ := testbundle.Write(t, 4096)
	cases := map[string][]string{
		"bundle push gives up when the registry never answers": {"bundle", "push", "--bundle", file},
		"install from a bundle gives up when the registry never answers": {"install", "--bundle", file, "--timeout", "1h",
			"--kubeconfig", newSilentServer(t).kubeconfig},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := runGuarded(t, context.Background(), append(args, "--registry", silentRegistry(t), "--request-timeout", "2s"))
			t.Logf("stderr: %s", got.errOut)
			if diff := cmp.Diff(ExitError, got.code); diff != "" {
				t.Errorf("exit code (-want +got):\n%s\nstderr: %s", diff, got.errOut)
			}
			if want := "no answer from the registry within --request-timeout 2s"; !strings.Contains(got.errOut, want) {
				t.Errorf("stderr lacks %q:\n%s", want, got.errOut)
			}
		})
	}
}
