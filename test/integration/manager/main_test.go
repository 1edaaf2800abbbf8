package manager

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/configuration"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// env is the package's control plane; it is set once in TestMain and only read afterwards.
var env *framework.Env

// stopTimeout bounds the wait for Run to return after its context ends.
const stopTimeout = framework.Long

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{
		Name:         "manager",
		LogVerbosity: 1,
		Env:          &env,
	}))
}

// running is one manager started by startManager.
type running struct {
	opts   *manager.Options
	cancel context.CancelFunc
	done   chan error
}

// stop ends the manager and waits for Run to return; it fails the test if Run failed.
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Run returned %v", err)
		}
		r.done <- nil
	case <-time.After(stopTimeout):
		t.Fatalf("Run did not return within %s of its context ending", stopTimeout)
	}
}

// startManager runs a manager until the test ends (or stop).
func startManager(t *testing.T, cfg *rest.Config, o *manager.Options) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(ctrl.LoggerInto(context.Background(), ctrl.Log.WithName("manager")))
	r := &running{opts: o, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- manager.Run(ctx, cfg, o) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Logf("manager Run returned: %v", err) // a port taken, say, when it ended before the test did
			}
		case <-time.After(stopTimeout):
			t.Errorf("Run did not return within %s of its context ending", stopTimeout)
		}
	})
	return r
}

// testOptions are a manager's options for a test: its own namespace, free loopback ports, URL
// mode at 127.0.0.1, fast leader election, no controllers or webhooks unless the test adds them.
func testOptions(t *testing.T, podNamespace string) *manager.Options {
	t.Helper()
	ports, err := framework.FreePorts(4)
	if err != nil {
		t.Fatal(err)
	}
	o := manager.NewOptions()
	o.PodNamespace = podNamespace
	o.MetricsAddr = "127.0.0.1:" + strconv.Itoa(ports[0])
	o.HealthProbeAddr = "127.0.0.1:" + strconv.Itoa(ports[1])
	o.WebhookPort = ports[2]
	o.PprofAddr = "127.0.0.1:" + strconv.Itoa(ports[3])
	o.WebhookHost = "127.0.0.1"
	o.WebhookBindAddress = "127.0.0.1"
	o.WebhookCertDir = t.TempDir()
	o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 4*time.Second, 3*time.Second, 500*time.Millisecond
	o.GracefulShutdown = 10 * time.Second
	o.SkipControllerNameValidation = true
	o.Controllers = nil
	o.Webhooks = nil
	return o
}

// httpGet returns the status and body of a plain GET.
func httpGet(url string) (int, string, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// readyz is the manager's /readyz status code.
func readyz(o *manager.Options) (int, error) {
	code, _, err := httpGet("http://" + o.HealthProbeAddr + "/readyz")
	return code, err
}

func waitReady(t *testing.T, o *manager.Options) {
	t.Helper()
	waitReadyz(t, o, http.StatusOK, "manager ready")
}

// waitReadyz waits until the manager's /readyz answers want; what names the wait.
func waitReadyz(t *testing.T, o *manager.Options, want int, what string) {
	t.Helper()
	framework.Eventually(t, framework.Long, what, func(context.Context) error {
		code, err := readyz(o)
		if err != nil {
			return err
		}
		return framework.Want(code == want, fmt.Sprintf("/readyz: %d, want %d", code, want))
	})
}

// installConfigurations replaces both webhook configurations with the table's, plus extra
// validating webhooks, and removes them when the test ends.
func installConfigurations(t *testing.T, target configuration.Target, extra ...admissionregistrationv1.ValidatingWebhook) {
	t.Helper()
	ctx := context.Background()
	m, v := configuration.Desired(target)
	v.Webhooks = append(v.Webhooks, extra...)
	for _, obj := range []client.Object{m, v} {
		if err := env.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		framework.Eventually(t, framework.Medium, "old configuration gone", func(context.Context) error {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
			if apierrors.IsNotFound(err) {
				return nil
			}
			return errors.Join(err, errors.New("still there"))
		})
		obj.SetResourceVersion("")
		framework.Create(t, env.Client, obj)
	}
	t.Cleanup(func() {
		for _, obj := range []client.Object{m, v} {
			_ = env.Client.Delete(context.Background(), obj)
		}
	})
}

// secret reads the manager's certificate Secret.
func secret(ns string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "kruise-webhook-certs"}, s)
	return s, err
}
