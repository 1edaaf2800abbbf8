package harness

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/configuration"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// poll is how often waits look again.
const poll = 100 * time.Millisecond

// LoopbackOptions are manager options for a manager serving its webhooks on 127.0.0.1 at a free
// port, with the configurations pointing at it by URL (the chart's webhookConfiguration.host
// mode), metrics off, /readyz on another free port and certificates under dir. The caller sets
// the controllers and webhooks it wants.
func LoopbackOptions(dir, namespace string) (*manager.Options, error) {
	ports, err := framework.FreePorts(2)
	if err != nil {
		return nil, err
	}
	o := manager.NewOptions()
	o.PodNamespace = namespace
	o.MetricsAddr = "0"
	o.EnablePprof = false
	o.HealthProbeAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))
	o.WebhookPort = ports[0]
	o.WebhookHost = "127.0.0.1"
	o.WebhookBindAddress = "127.0.0.1"
	o.WebhookCertDir = filepath.Join(dir, "certs")
	o.GracefulShutdown = 5 * time.Second
	return o, nil
}

// Manager is one in-process kruise-manager.
type Manager struct {
	Name    string
	Options *manager.Options

	cancel   context.CancelFunc
	done     chan error
	stopOnce sync.Once
}

// Start runs the manager against cfg until Stop, logging under name.
func Start(ctx context.Context, cfg *rest.Config, name string, o *manager.Options) *Manager {
	ctx, cancel := context.WithCancel(ctx)
	m := &Manager{Name: name, Options: o, cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- manager.Run(ctrl.LoggerInto(ctx, ctrl.Log.WithName(name)), cfg, o) }()
	return m
}

// WaitReady waits for /readyz, which passes once the webhook server serves, and fails at once if
// the manager exits.
func (m *Manager) WaitReady(ctx context.Context, timeout time.Duration) error {
	url := "http://" + m.Options.HealthProbeAddr + "/readyz"
	var last error
	err := wait.PollUntilContextTimeout(ctx, poll, timeout, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-m.done:
			m.done <- err
			return false, fmt.Errorf("manager %s exited: %v", m.Name, err)
		default:
		}
		last = httpOK(ctx, url)
		return last == nil, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w (last: %v)", err, last)
	}
	return err
}

// Stop cancels the manager and waits for it to return; calling it again does nothing.
func (m *Manager) Stop() {
	m.stopOnce.Do(func() {
		m.cancel()
		select {
		case <-m.done:
		case <-time.After(30 * time.Second):
		}
	})
}

// RegisterWebhooks creates both webhook configurations from the table, pointing at port on
// loopback, with the chart's default policies: pod webhooks fail open, the others closed. The
// manager patches its CA in and drops the webhooks it does not serve.
func RegisterWebhooks(ctx context.Context, c client.Client, namespace string, port int) error {
	m, v := configuration.Desired(configuration.Target{
		Namespace: namespace, Host: "127.0.0.1", Port: port,
		FailurePolicyPods: admissionregistrationv1.Ignore, FailurePolicy: admissionregistrationv1.Fail,
	})
	if err := c.Create(ctx, m); err != nil {
		return fmt.Errorf("create %s: %w", m.Name, err)
	}
	if err := c.Create(ctx, v); err != nil {
		return fmt.Errorf("create %s: %w", v.Name, err)
	}
	return nil
}

// WaitForCABundle waits until every webhook left in both configurations carries a CA and at
// least one webhook is left.
func WaitForCABundle(ctx context.Context, c client.Client, timeout time.Duration) error {
	return waitForWebhooks(ctx, c, timeout, func(m, v int) error {
		return framework.Want(m+v > 0, "no webhook left in either configuration")
	})
}

// WaitForServedWebhooks waits until the configurations hold only the mutating and validating
// webhooks the manager serves, each with the CA: the manager drops the others.
func WaitForServedWebhooks(ctx context.Context, c client.Client, timeout time.Duration, mutating, validating int) error {
	return waitForWebhooks(ctx, c, timeout, func(m, v int) error {
		return framework.Want(m == mutating && v == validating,
			fmt.Sprintf("%d mutating and %d validating webhooks, want %d and %d", m, v, mutating, validating))
	})
}

// waitForWebhooks waits until every webhook in both configurations carries a CA and counts,
// given how many each holds, returns nil.
func waitForWebhooks(ctx context.Context, c client.Client, timeout time.Duration, counts func(mutating, validating int) error) error {
	return framework.PollUntil(ctx, timeout, func(ctx context.Context) error {
		var m admissionregistrationv1.MutatingWebhookConfiguration
		var v admissionregistrationv1.ValidatingWebhookConfiguration
		if err := c.Get(ctx, client.ObjectKey{Name: configuration.MutatingName}, &m); err != nil {
			return err
		}
		if err := c.Get(ctx, client.ObjectKey{Name: configuration.ValidatingName}, &v); err != nil {
			return err
		}
		for _, w := range m.Webhooks {
			if len(w.ClientConfig.CABundle) == 0 {
				return fmt.Errorf("webhook %s has no caBundle", w.Name)
			}
		}
		for _, w := range v.Webhooks {
			if len(w.ClientConfig.CABundle) == 0 {
				return fmt.Errorf("webhook %s has no caBundle", w.Name)
			}
		}
		return counts(len(m.Webhooks), len(v.Webhooks))
	})
}

func httpOK(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// Serve starts a manager like Start, registers both webhook configurations pointing at it, and
// waits until it is ready and its CA is patched into every webhook left; the returned manager
// is set whenever it started, so the caller can stop it on error too.
func Serve(ctx context.Context, env *framework.Env, name string, o *manager.Options) (*Manager, error) {
	m := Start(ctx, env.Config, name, o)
	if err := RegisterWebhooks(ctx, env.Client, o.PodNamespace, o.WebhookPort); err != nil {
		return m, fmt.Errorf("register webhooks: %w", err)
	}
	if err := m.WaitReady(ctx, framework.Long); err != nil {
		return m, fmt.Errorf("manager not ready: %w", err)
	}
	if err := WaitForCABundle(ctx, env.Client, framework.Long); err != nil {
		return m, fmt.Errorf("webhook caBundle not patched: %w", err)
	}
	return m, nil
}

// Restart stops running (when not nil), deletes both webhook configurations, and serves a new
// manager with o as Serve does, with the configurations registered afresh for it. Suites whose
// tests need managers of different settings switch between them with it.
func Restart(ctx context.Context, env *framework.Env, running *Manager, name string, o *manager.Options) (*Manager, error) {
	if running != nil {
		running.Stop()
	}
	for _, obj := range []client.Object{
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configuration.MutatingName}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configuration.ValidatingName}},
	} {
		if err := client.IgnoreNotFound(env.Client.Delete(ctx, obj)); err != nil {
			return nil, fmt.Errorf("delete %s: %w", obj.GetName(), err)
		}
	}
	return Serve(ctx, env, name, o)
}
