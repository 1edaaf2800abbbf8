package containerrecreaterequest

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/features"
)

// Handlers serves the ContainerRecreateRequest handler at its 1.8 path,
// /mutate-apps-kruise-io-v1alpha1-containerrecreaterequest. It reads the target pod through
// the manager's API reader: a request is usually created right after the pod changed, and a
// stale cache would record an old container ID.
var Handlers = admit.Webhooks{Group: "apps.kruise.io", Version: "v1alpha1", Name: "containerrecreaterequest",
	Mutating: func(e admit.Env) admission.Handler {
		return NewMutatingHandler(e.Kind.Decoder, e.Manager.GetAPIReader(), e.Gates)
	},
}.Handlers

// NewMutatingHandler returns the handler; reader gets the target pod. It refuses every request
// while kruise-daemon is gated off, refuses an update of an immutable field (403), and answers
// a create with a patch that completes the request from its pod.
func NewMutatingHandler(dec admission.Decoder, reader client.Reader, gates featuregate.FeatureGate) admission.Handler {
	kind := admit.Kind{
		Name: "containerrecreaterequest", Decoder: dec, Namespaced: true, WithOld: true,
		Gate: func() error {
			if !gates.Enabled(features.KruiseDaemon) {
				return admit.Refuse(http.StatusForbidden, admit.GateOff(features.KruiseDaemon))
			}
			return nil
		},
	}
	return admit.Mutating(kind, func(ctx context.Context, crr, old *appsv1alpha1.ContainerRecreateRequest) error {
		if old == nil {
			return complete(ctx, reader, crr)
		}
		if errs := validateUpdate(crr, old); len(errs) > 0 {
			return admit.Refuse(http.StatusForbidden, errs.ToAggregate())
		}
		return nil
	})
}

// complete checks a new request against the 1.8 rules, defaults it and fills it in from its
// pod, which it reads in the request's namespace only.
func complete(ctx context.Context, reader client.Reader, crr *appsv1alpha1.ContainerRecreateRequest) error {
	if errs := validateCreate(crr); len(errs) > 0 {
		return admit.Refuse(http.StatusBadRequest, errs.ToAggregate())
	}
	setDefaults(crr)
	pod := &corev1.Pod{}
	err := reader.Get(ctx, types.NamespacedName{Namespace: crr.Namespace, Name: crr.Spec.PodName}, pod)
	switch {
	case apierrors.IsNotFound(err):
		return admit.Refuse(http.StatusBadRequest, fmt.Errorf("spec.podName: pod %s not found in namespace %s", crr.Spec.PodName, crr.Namespace))
	case err != nil:
		return fmt.Errorf("get pod %s/%s: %w", crr.Namespace, crr.Spec.PodName, err)
	}
	if errs := fillFromPod(crr, pod); len(errs) > 0 {
		return admit.Refuse(http.StatusBadRequest, errs.ToAggregate())
	}
	return nil
}
