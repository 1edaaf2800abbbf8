package manager

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/configuration"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

func outagePod(ns string) *corev1.Pod {
	return builder.Pod("", ns).GenerateName("outage-").Image("registry.example.com/app:1").Obj()
}

// refusedByPodWebhook creates a pod and reports whether mpod.kb.io refused it.
func refusedByPodWebhook(ctx context.Context, t *testing.T, ns string) (bool, error) {
	p := outagePod(ns)
	err := env.Client.Create(ctx, p)
	if err == nil {
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), p) })
		return false, nil
	}
	if strings.Contains(err.Error(), "mpod.kb.io") {
		return true, nil
	}
	return false, err
}

func TestWebhookOutage(t *testing.T) {
	ctx := context.Background()
	installNS := framework.NewNamespace(t, env.Client, "install-", map[string]string{"control-plane": "openkruise"})
	plainNS := framework.NewNamespace(t, env.Client, "apps-", nil)
	// A manager serves mpod.kb.io (failing closed) with a handler that allows every pod and
	// counts them, and is then stopped.
	var calls atomic.Int32
	o := testOptions(t, installNS)
	o.Webhooks = []setup.Webhooks{func(ctrl.Manager, setup.Deps) map[string]admission.Handler {
		return map[string]admission.Handler{"/mutate-pod": admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
			calls.Add(1)
			return admission.Allowed("")
		})}
	}}
	installConfigurations(t, configuration.Target{Namespace: installNS, FailurePolicyPods: admissionregistrationv1.Fail})
	run := startManager(t, env.Config, o)
	waitReady(t, o)
	framework.Eventually(t, framework.Medium, "a pod in an ordinary namespace passes the running webhook", func(context.Context) error {
		refused, err := refusedByPodWebhook(ctx, t, plainNS)
		if err != nil {
			return err
		}
		if refused || calls.Load() == 0 {
			return fmt.Errorf("refused=%t, handler calls=%d", refused, calls.Load())
		}
		return nil
	})
	run.stop(t)

	framework.Eventually(t, framework.Medium, "mpod.kb.io refuses once the manager is gone", func(context.Context) error {
		refused, err := refusedByPodWebhook(ctx, t, plainNS)
		if err != nil {
			return err
		}
		if !refused {
			return errors.New("a pod in an ordinary namespace was created")
		}
		return nil
	})

	cases := map[string]struct {
		namespace   string
		wantRefused bool
	}{
		"a pod in kube-system is created":           {namespace: "kube-system", wantRefused: false},
		"a pod in the install namespace is created": {namespace: installNS, wantRefused: false},
		"a pod in an ordinary namespace is refused": {namespace: plainNS, wantRefused: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			refused, err := refusedByPodWebhook(ctx, t, tc.namespace)
			if err != nil {
				t.Fatal(err)
			}
			if refused != tc.wantRefused {
				t.Errorf("refused by mpod.kb.io = %t, want %t", refused, tc.wantRefused)
			}
		})
	}
}
