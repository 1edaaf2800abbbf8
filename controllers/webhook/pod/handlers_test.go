package pod

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podadmission"
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

// seenCheck records the attempts it sees and answers with allow and err. It covers every
// operation unless ops names some.
type seenCheck struct {
	seen  []podadmission.Attempt
	allow bool
	err   error
	ops   []podadmission.Op
}

func (*seenCheck) Name() string { return "seen" }

func (c *seenCheck) Covers(op podadmission.Op) bool {
	return len(c.ops) == 0 || slices.Contains(c.ops, op)
}

func (c *seenCheck) Validate(_ context.Context, a *podadmission.Attempt) (bool, string, error) {
	c.seen = append(c.seen, *a)
	return c.allow, "no", c.err
}

func raw(t *testing.T, obj any) runtime.RawExtension {
	t.Helper()
	return runtime.RawExtension{Raw: webhooktest.JSON(t, obj)}
}

// attemptSummary is the part of an Attempt the table pins down.
type attemptSummary struct {
	Op     podadmission.Op
	Pod    string
	NewPod string
	DryRun bool
}

func TestValidatingHandlerDecodesEachAttemptOnce(t *testing.T) {
	pod := builder.Pod("web-0", "ns").Obj()
	newPod := builder.Pod("web-0", "ns").Label("v", "2").Obj()
	req := func(op admissionv1.Operation, sub string, mut func(*admissionv1.AdmissionRequest)) admission.Request {
		r := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: op, SubResource: sub, Namespace: "ns", Name: "web-0"}}
		mut(&r.AdmissionRequest)
		return r
	}
	cases := map[string]struct {
		req  admission.Request
		want []attemptSummary
	}{
		"a delete carrying DeleteOptions is checked with the old pod": {
			req: req(admissionv1.Delete, "", func(r *admissionv1.AdmissionRequest) {
				r.OldObject = raw(t, pod)
				r.Options = raw(t, metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "DeleteOptions"}})
			}),
			want: []attemptSummary{{Op: podadmission.OpDelete, Pod: "web-0"}},
		},
		"a delete whose options ask for a dry run is a dry run": {
			req: req(admissionv1.Delete, "", func(r *admissionv1.AdmissionRequest) {
				r.OldObject = raw(t, pod)
				r.Options = raw(t, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
			}),
			want: []attemptSummary{{Op: podadmission.OpDelete, Pod: "web-0", DryRun: true}},
		},
		"a delete without an old object is not checked": {
			req: req(admissionv1.Delete, "", func(*admissionv1.AdmissionRequest) {}),
		},
		"an eviction is checked with the live pod": {
			req: req(admissionv1.Create, "eviction", func(r *admissionv1.AdmissionRequest) {
				r.Object = raw(t, policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns"}})
			}),
			want: []attemptSummary{{Op: podadmission.OpEvict, Pod: "web-0"}},
		},
		"an update is checked with both pods": {
			req: req(admissionv1.Update, "", func(r *admissionv1.AdmissionRequest) {
				r.OldObject, r.Object, r.DryRun = raw(t, pod), raw(t, newPod), ptr.To(true)
			}),
			want: []attemptSummary{{Op: podadmission.OpUpdate, Pod: "web-0", NewPod: "web-0", DryRun: true}},
		},
		"a status update is not checked": {
			req: req(admissionv1.Update, "status", func(*admissionv1.AdmissionRequest) {}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			live := fake.NewClientBuilder().WithObjects(pod.DeepCopy()).Build()
			c := &seenCheck{allow: true}
			resp := NewValidatingHandler(admission.NewDecoder(apis.NewScheme()), live, c).Handle(context.Background(), tc.req)
			if !resp.Allowed {
				t.Fatalf("response %+v, want allowed", resp.Result)
			}
			var got []attemptSummary
			for _, a := range c.seen {
				s := attemptSummary{Op: a.Op, Pod: a.Pod.Name, DryRun: a.DryRun}
				if a.NewPod != nil {
					s.NewPod = a.NewPod.Name
				}
				got = append(got, s)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("attempts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidatingHandlerAnswersWithTheChecks(t *testing.T) {
	del := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Delete, Namespace: "ns", Name: "p"}}
	del.OldObject = raw(t, builder.Pod("p", "ns").Obj())
	var live client.Reader = fake.NewClientBuilder().Build()
	dec := admission.NewDecoder(apis.NewScheme())
	cases := map[string]struct {
		checks      []podadmission.Check
		wantAllowed bool
		wantCode    int32
	}{
		"every check allowing allows": {checks: []podadmission.Check{&seenCheck{allow: true}, &seenCheck{allow: true}}, wantAllowed: true},
		"a refusing check denies":     {checks: []podadmission.Check{&seenCheck{allow: true}, &seenCheck{allow: false}}, wantCode: 403},
		"a failing check is an error": {checks: []podadmission.Check{&seenCheck{err: errors.New("boom")}}, wantCode: 500},
		"no checks allows at once":    {wantAllowed: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resp := NewValidatingHandler(dec, live, tc.checks...).Handle(context.Background(), del)
			if resp.Allowed != tc.wantAllowed {
				t.Fatalf("allowed = %v, want %v (%+v)", resp.Allowed, tc.wantAllowed, resp.Result)
			}
			if !tc.wantAllowed && resp.Result.Code != tc.wantCode {
				t.Errorf("code = %d, want %d", resp.Result.Code, tc.wantCode)
			}
		})
	}
}

func TestValidatingHandlerDecodesNothingNoCheckCovers(t *testing.T) {
	// Neither object decodes: a handler that tried would answer 400.
	garbage := runtime.RawExtension{Raw: []byte("{not json")}
	update := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Update, Namespace: "ns", Name: "web-0", OldObject: garbage, Object: garbage}}
	dec := admission.NewDecoder(apis.NewScheme())
	live := fake.NewClientBuilder().Build()

	deletesOnly := &seenCheck{allow: false, ops: []podadmission.Op{podadmission.OpDelete, podadmission.OpEvict}}
	resp := NewValidatingHandler(dec, live, deletesOnly).Handle(context.Background(), update)
	if !resp.Allowed || len(deletesOnly.seen) != 0 {
		t.Fatalf("an update no check covers: allowed %v (result %+v), check saw %d attempts; want allowed, unseen", resp.Allowed, resp.Result, len(deletesOnly.seen))
	}

	updates := &seenCheck{allow: true, ops: []podadmission.Op{podadmission.OpUpdate}}
	resp = NewValidatingHandler(dec, live, deletesOnly, updates).Handle(context.Background(), update)
	if resp.Allowed || resp.Result == nil || resp.Result.Code != 400 {
		t.Fatalf("an update one check covers was not decoded: allowed %v, result %+v; want a 400 for the undecodable pod", resp.Allowed, resp.Result)
	}

	// A check that does not cover an operation is not asked about it, even when another is.
	pod := builder.Pod("web-0", "ns").Obj()
	update.OldObject, update.Object = raw(t, pod), raw(t, pod)
	resp = NewValidatingHandler(dec, live, deletesOnly, updates).Handle(context.Background(), update)
	if !resp.Allowed || len(deletesOnly.seen) != 0 || len(updates.seen) != 1 {
		t.Fatalf("allowed %v, the delete check saw %d attempts and the update check %d; want allowed, 0 and 1",
			resp.Allowed, len(deletesOnly.seen), len(updates.seen))
	}
}
