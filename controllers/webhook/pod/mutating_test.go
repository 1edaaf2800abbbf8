package pod

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

func controlledBy(apiVersion, kind string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: "owner", UID: "uid", Controller: ptr.To(true)}
}

// ownedBy is a pod whose controller is the workload of kind in apiVersion.
func ownedBy(apiVersion, kind string) *corev1.Pod {
	return builder.Pod("p", "ns").OwnedBy(controlledBy(apiVersion, kind)).Obj()
}

const (
	inPlace   = appspub.InPlaceUpdateReady
	kruiseRdy = appspub.KruisePodReadyConditionType
)

func TestHandleAddsReadinessGates(t *testing.T) {
	both, readyOnly := []corev1.PodConditionType{inPlace, kruiseRdy}, []corev1.PodConditionType{kruiseRdy}
	tests := []struct {
		name      string
		allGate   bool
		op        admissionv1.Operation
		pod       *corev1.Pod
		wantGates []corev1.PodConditionType
	}{
		{name: "a CloneSet's pod gets both gates", op: admissionv1.Create, pod: ownedBy("apps.kruise.io/v1alpha1", "CloneSet"), wantGates: both},
		{name: "an Advanced StatefulSet's pod gets both gates", op: admissionv1.Create, pod: ownedBy("apps.kruise.io/v1beta1", "StatefulSet"), wantGates: both},
		{name: "an Advanced DaemonSet's pod gets both gates", op: admissionv1.Create, pod: ownedBy("apps.kruise.io/v1alpha1", "DaemonSet"), wantGates: both},
		{name: "a BroadcastJob's pod gets only KruisePodReady", op: admissionv1.Create, pod: ownedBy("apps.kruise.io/v1alpha1", "BroadcastJob"), wantGates: readyOnly},
		{
			name: "gates the pod already has are not added twice",
			op:   admissionv1.Create,
			pod: builder.Pod("p", "ns").OwnedBy(controlledBy("apps.kruise.io/v1alpha1", "CloneSet")).
				ReadinessGate(kruiseRdy).Obj(),
			wantGates: []corev1.PodConditionType{kruiseRdy, inPlace},
		},
		{name: "a native ReplicaSet's pod is left alone", op: admissionv1.Create, pod: ownedBy("apps/v1", "ReplicaSet")},
		{name: "a native StatefulSet's pod is left alone", op: admissionv1.Create, pod: ownedBy("apps/v1", "StatefulSet")},
		{
			name: "a pod that only lists a CloneSet as a non-controller owner is left alone",
			op:   admissionv1.Create,
			pod: builder.Pod("p", "ns").OwnedBy(metav1.OwnerReference{
				APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "o", UID: "u",
			}).Obj(),
		},
		{
			name: "a bare pod is left alone",
			op:   admissionv1.Create,
			pod:  builder.Pod("p", "ns").Obj(),
		},
		{name: "with KruisePodReadinessGate on every new pod gets KruisePodReady", allGate: true, op: admissionv1.Create, pod: ownedBy("apps/v1", "ReplicaSet"), wantGates: readyOnly},
		{name: "an update is left alone", op: admissionv1.Update, pod: ownedBy("apps.kruise.io/v1alpha1", "CloneSet")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := features.NewGate()
			if tt.allGate {
				if err := g.Set("KruisePodReadinessGate=true"); err != nil {
					t.Fatal(err)
				}
			}
			h := NewMutatingHandler(admission.NewDecoder(apis.NewScheme()), g)
			raw, err := json.Marshal(tt.pod)
			if err != nil {
				t.Fatal(err)
			}
			req := webhooktest.Request(tt.op, "ns", raw, nil)
			resp := h.Handle(context.Background(), req)
			if !resp.Allowed {
				t.Fatalf("not allowed: %v", resp.Result)
			}
			got := applyGatePatches(t, tt.pod, resp)
			if diff := cmp.Diff(tt.wantGates, got); diff != "" {
				t.Errorf("readiness gates (-want +got):\n%s", diff)
			}
		})
	}
}

// applyGatePatches applies the response's JSON patch to pod and returns its readiness gates.
func applyGatePatches(t *testing.T, pod *corev1.Pod, resp admission.Response) []corev1.PodConditionType {
	t.Helper()
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	got := pod
	if len(resp.Patches) > 0 {
		got = patched(t, raw, resp)
	}
	var gates []corev1.PodConditionType
	for _, g := range got.Spec.ReadinessGates {
		gates = append(gates, g.ConditionType)
	}
	return gates
}

// patched is the pod raw holds with the response's patches applied.
func patched(t *testing.T, raw []byte, resp admission.Response) *corev1.Pod {
	t.Helper()
	out, err := webhooktest.Apply(raw, resp)
	if err != nil {
		t.Fatal(err)
	}
	got := &corev1.Pod{}
	if err := json.Unmarshal(out, got); err != nil {
		t.Fatal(err)
	}
	return got
}

// labelStep records the order steps ran in, on the pod's "steps" annotation.
type labelStep struct {
	name string
	err  error
}

func (s labelStep) Name() string { return s.name }

func (s labelStep) Mutate(_ context.Context, _ admission.Request, pod *corev1.Pod) (bool, error) {
	if s.err != nil {
		return false, s.err
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations["steps"] += s.name + "," + pod.Namespace + ";"
	return true, nil
}

func TestStepsRunInOrderOnOnePodAndAnErrorNamesItsStep(t *testing.T) {
	dec := admission.NewDecoder(apis.NewScheme())
	pod := builder.Pod("p", "").Obj()
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	req := webhooktest.Request(admissionv1.Create, "ns", raw, nil)

	h := NewMutatingHandler(dec, features.NewGate(), labelStep{name: "first"}, labelStep{name: "second"})
	resp := h.Handle(context.Background(), req)
	if !resp.Allowed || len(resp.Patches) == 0 {
		t.Fatalf("want an allowed patch, got %+v", resp)
	}
	got := patched(t, raw, resp)
	// Both steps saw the request's namespace on a pod whose body had none.
	if want := "first,ns;second,ns;"; got.Annotations["steps"] != want {
		t.Errorf("steps annotation = %q, want %q", got.Annotations["steps"], want)
	}

	h = NewMutatingHandler(dec, features.NewGate(), labelStep{name: "first"}, labelStep{name: "broken", err: errors.New("no room")})
	resp = h.Handle(context.Background(), req)
	if resp.Allowed {
		t.Fatal("a failing step must refuse the pod")
	}
	if msg := resp.Result.Message; !strings.Contains(msg, "broken") || !strings.Contains(msg, "no room") {
		t.Errorf("refusal %q must name the step and its error", msg)
	}
}
