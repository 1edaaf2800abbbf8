package manager

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// reconciledBy is the annotation the probe controller stamps with its manager's id.
const reconciledBy = "test.kruise-addon.io/reconciled-by"

// probe is a trivial controller: it stamps ConfigMaps of one namespace with its id, and
// records whether its manager runs leader-only work.
type probe struct {
	id         string
	namespace  string
	leading    atomic.Bool
	reconciles atomic.Int32
	// watching is set once the controller's watches start, which fill its caches.
	watching atomic.Bool
}

func (p *probe) component() manager.Component {
	return manager.Component{Name: "probe", Setup: func(mgr ctrl.Manager, d setup.Deps) error {
		// A runnable without NeedLeaderElection runs on the leader only, like every controller.
		if err := mgr.Add(ctrlmanager.RunnableFunc(func(ctx context.Context) error {
			p.leading.Store(true)
			<-ctx.Done()
			return nil
		})); err != nil {
			return err
		}
		inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == p.namespace })
		return ctrl.NewControllerManagedBy(mgr).
			Named("probe").
			For(&corev1.ConfigMap{}, builder.WithPredicates(inNamespace)).
			WatchesRawSource(source.Func(func(context.Context, workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
				p.watching.Store(true)
				return nil
			})).
			WithOptions(controller.Options{MaxConcurrentReconciles: d.Workers("probe")}).
			Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
				p.reconciles.Add(1)
				cm := &corev1.ConfigMap{}
				if err := mgr.GetClient().Get(ctx, req.NamespacedName, cm); err != nil {
					return reconcile.Result{}, client.IgnoreNotFound(err)
				}
				if cm.Annotations[reconciledBy] != "" {
					return reconcile.Result{}, nil
				}
				if cm.Annotations == nil {
					cm.Annotations = map[string]string{}
				}
				cm.Annotations[reconciledBy] = p.id
				return reconcile.Result{}, mgr.GetClient().Update(ctx, cm)
			}))
	}}
}

// stampedBy creates a ConfigMap and waits until the probe of want has stamped it.
func stampedBy(t *testing.T, ns, name, want string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	framework.Create(t, env.Client, cm)
	framework.Eventually(t, framework.Medium, "configmap "+name+" reconciled by "+want, func(context.Context) error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(cm), cm); err != nil {
			return err
		}
		if got := cm.Annotations[reconciledBy]; got != want {
			return fmt.Errorf("reconciled by %q", got)
		}
		return nil
	})
}

// pair is two managers with a probe each in a namespace of their own: a leads, b stands by.
type pair struct {
	ns           string
	a, b         *probe
	optsA, optsB *manager.Options
	runA         *running
}

// leaderAndStandby starts a, waits until it leads, then starts b; both serve webhooks, since
// readiness does not depend on leading.
func leaderAndStandby(t *testing.T, prefix string) pair {
	t.Helper()
	ns := framework.NewNamespace(t, env.Client, prefix, nil)
	p := pair{ns: ns, a: &probe{id: "a", namespace: ns}, b: &probe{id: "b", namespace: ns}, optsA: testOptions(t, ns)}
	p.optsA.Controllers = []manager.Component{p.a.component()}
	p.runA = startManager(t, env.Config, p.optsA)
	framework.Eventually(t, framework.Long, "a leads", func(context.Context) error {
		if !p.a.leading.Load() {
			return errors.New("a is not leading")
		}
		return nil
	})
	// b's free ports are picked once a holds its own: picked before, they could be the same.
	p.optsB = testOptions(t, ns)
	p.optsB.Controllers = []manager.Component{p.b.component()}
	startManager(t, env.Config, p.optsB)
	waitReady(t, p.optsA)
	waitReady(t, p.optsB)
	return p
}

func TestOneLeaderAndTakeover(t *testing.T) {
	p := leaderAndStandby(t, "leader-")
	ns, b, optsA, optsB, runA := p.ns, p.b, p.optsA, p.optsB, p.runA

	// Both replicas share Secret kruise-webhook-certs and serve what it holds.
	s, err := secret(ns)
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]*manager.Options{"a": optsA, "b": optsB} {
		onDisk, err := os.ReadFile(filepath.Join(o.WebhookCertDir, "tls.crt"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(onDisk, s.Data["cert.pem"]) {
			t.Errorf("manager %s serves a certificate other than the shared Secret's", name)
		}
	}

	holderA, err := harness.LeaseHolder(context.Background(), env.Client, ns)
	if err != nil {
		t.Fatal(err)
	}
	if holderA == "" {
		t.Fatal("Lease kruise-manager has no holder while a leads")
	}
	stampedBy(t, ns, "first", "a")
	if b.leading.Load() || b.reconciles.Load() != 0 {
		t.Fatalf("b runs leader work while a holds the Lease: leading=%t reconciles=%d", b.leading.Load(), b.reconciles.Load())
	}

	runA.stop(t)
	harness.WaitNewLeader(t, env.Client, ns, holderA, framework.Long)
	framework.Eventually(t, framework.Long, "b leads", func(context.Context) error {
		if !b.leading.Load() {
			return errors.New("b is not leading")
		}
		return nil
	})
	stampedBy(t, ns, "second", "b")
}

// TestStandbyWarmsItsControllersButReconcilesNothing: a standby starts its controllers' watches,
// so that its caches are full when it takes over, yet reconciles nothing while another leads.
func TestStandbyWarmsItsControllersButReconcilesNothing(t *testing.T) {
	p := leaderAndStandby(t, "standby-")
	b := p.b
	framework.Eventually(t, framework.Medium, "the standby's controller watches", func(context.Context) error {
		if !b.watching.Load() {
			return errors.New("the standby's controller has not started its watches")
		}
		return nil
	})
	stampedBy(t, p.ns, "while-a-leads", "a")
	if b.leading.Load() || b.reconciles.Load() != 0 {
		t.Fatalf("the standby runs leader work while a holds the Lease: leading=%t reconciles=%d", b.leading.Load(), b.reconciles.Load())
	}
}

// TestARestartedLeaderTakesBackTheLeaseItsCrashedProcessHeld: a leader that crashed left the
// Lease held and valid. The kubelet restarts its container, with its pod's name: the restarted
// manager leads as soon as its caches are warm, while a standby of another pod, running since
// before, waits the lease out.
func TestARestartedLeaderTakesBackTheLeaseItsCrashedProcessHeld(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "restart-", nil)
	leaseHeldForAnHour(t, ns, "kruise-controller-manager-a")

	b := &probe{id: "b", namespace: ns}
	optsB := testOptions(t, ns)
	optsB.PodName = "kruise-controller-manager-b"
	optsB.Controllers = []manager.Component{b.component()}
	startManager(t, env.Config, optsB)
	// Warm-up ends before a manager runs for the Lease: b is trying to take it from here on.
	framework.Eventually(t, framework.Medium, "the standby's controller watches", func(context.Context) error {
		if !b.watching.Load() {
			return errors.New("the standby's controller has not started its watches")
		}
		return nil
	})

	a := &probe{id: "a", namespace: ns}
	optsA := testOptions(t, ns)
	optsA.PodName = "kruise-controller-manager-a"
	optsA.Controllers = []manager.Component{a.component()}
	startManager(t, env.Config, optsA)
	stampedBy(t, ns, "after-the-restart", "a")
	if b.leading.Load() || b.reconciles.Load() != 0 {
		t.Fatalf("the other pod's manager led while the restarted one's Lease was valid: leading=%t reconciles=%d", b.leading.Load(), b.reconciles.Load())
	}
	holder, err := harness.LeaseHolder(context.Background(), env.Client, ns)
	if err != nil {
		t.Fatal(err)
	}
	if holder != "kruise-controller-manager-a" {
		t.Errorf("Lease held by %q, want the restarted pod's name kruise-controller-manager-a", holder)
	}
}

// leaseHeldForAnHour writes the Lease in ns as a leader that crashed left it: held by holder and
// valid for an hour.
func leaseHeldForAnHour(t *testing.T, ns, holder string) {
	t.Helper()
	now := metav1.NewMicroTime(time.Now())
	framework.Create(t, env.Client, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: manager.LeaseName},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder),
			LeaseDurationSeconds: ptr.To(int32(3600)), AcquireTime: &now, RenewTime: &now},
	})
}
