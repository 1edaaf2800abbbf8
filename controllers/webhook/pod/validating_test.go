package pod

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podadmission"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

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
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: b}
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
