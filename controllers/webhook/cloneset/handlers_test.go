package cloneset

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
)

func request(t *testing.T, op admissionv1.Operation, obj, old runtime.Object) admission.Request {
	t.Helper()
	raw := func(o runtime.Object) runtime.RawExtension {
		if o == nil {
			return runtime.RawExtension{}
		}
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return runtime.RawExtension{Raw: b}
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: op, Object: raw(obj), OldObject: raw(old), Namespace: "ns", Name: "web",
	}}
}

func gates(t *testing.T, set string) featuregate.FeatureGate {
	t.Helper()
	g := features.NewGate()
	if set != "" {
		if err := g.Set(set); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// patchedPaths lists the top-level paths a mutating response patches.
func patchedPaths(patches []jsonpatch.JsonPatchOperation) []string {
	var out []string
	for _, p := range patches {
		out = append(out, p.Operation+" "+p.Path)
	}
	return out
}

func TestMutatingHandler(t *testing.T) {
	defaultedCS := func() *appsv1alpha1.CloneSet {
		cs := kinds.CloneSet("web", "ns").Obj()
		setDefaults(cs, true)
		return cs
	}
	tests := []struct {
		name        string
		gates       string
		op          admissionv1.Operation
		obj, old    *appsv1alpha1.CloneSet
		wantPatches []string
	}{
		{
			name: "a new CloneSet is patched with the strategy and template defaults",
			op:   admissionv1.Create,
			obj:  kinds.CloneSet("web", "ns").Obj(),
			wantPatches: []string{
				"add /spec/revisionHistoryLimit",
				"add /spec/template/spec/dnsPolicy",
				"add /spec/template/spec/restartPolicy",
				"add /spec/template/spec/schedulerName",
				"add /spec/template/spec/securityContext",
				"add /spec/template/spec/terminationGracePeriodSeconds",
				"add /spec/template/spec/containers/0/imagePullPolicy",
				"add /spec/template/spec/containers/0/terminationMessagePath",
				"add /spec/template/spec/containers/0/terminationMessagePolicy",
				"add /spec/updateStrategy/maxSurge",
				"add /spec/updateStrategy/maxUnavailable",
				"add /spec/updateStrategy/partition",
				"add /spec/updateStrategy/type",
			},
		},
		{
			name:  "with TemplateNoDefaults a new CloneSet's template is left alone",
			gates: "TemplateNoDefaults=true",
			op:    admissionv1.Create,
			obj:   kinds.CloneSet("web", "ns").Obj(),
			wantPatches: []string{
				"add /spec/revisionHistoryLimit",
				"add /spec/updateStrategy/maxSurge",
				"add /spec/updateStrategy/maxUnavailable",
				"add /spec/updateStrategy/partition",
				"add /spec/updateStrategy/type",
			},
		},
		{
			name: "an already defaulted CloneSet is allowed without patches",
			op:   admissionv1.Create,
			obj:  defaultedCS(),
		},
		{
			name: "an update that keeps the template does not default it",
			op:   admissionv1.Update,
			obj: func() *appsv1alpha1.CloneSet {
				cs := kinds.CloneSet("web", "ns").Replicas(3).Obj()
				setDefaults(cs, false)
				return cs
			}(),
			old: func() *appsv1alpha1.CloneSet {
				cs := kinds.CloneSet("web", "ns").Obj()
				setDefaults(cs, false)
				return cs
			}(),
		},
		{
			name: "an update that changes the template defaults it",
			op:   admissionv1.Update,
			obj: func() *appsv1alpha1.CloneSet {
				cs := defaultedCS()
				cs.Spec.Template.Spec.Containers[0].ImagePullPolicy = ""
				cs.Spec.Template.Spec.Containers[0].Image = "app:2"
				return cs
			}(),
			old:         defaultedCS(),
			wantPatches: []string{"add /spec/template/spec/containers/0/imagePullPolicy"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewMutatingHandler(admission.NewDecoder(apis.NewScheme()), gates(t, tt.gates))
			var old runtime.Object
			if tt.old != nil {
				old = tt.old
			}
			resp := h.Handle(context.Background(), request(t, tt.op, tt.obj, old))
			if !resp.Allowed {
				t.Fatalf("not allowed: %v", resp.Result)
			}
			got := patchedPaths(resp.Patches)
			sortStrings(got)
			want := append([]string(nil), tt.wantPatches...)
			sortStrings(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("patches (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidatingHandler(t *testing.T) {
	cs := valid()
	cs.ResourceVersion = "1"
	mine := ownedPod("web-mine", testUID)
	foreign := ownedPod("web-foreign", "other-uid")
	// fresh is a pod of this CloneSet the cache has not seen yet.
	fresh := ownedPod("web-fresh", testUID)
	// elsewhere is a pod of this CloneSet's UID in another namespace.
	elsewhere := ownedPod("web-elsewhere", testUID)
	elsewhere.Namespace = "other"
	protected := valid()
	protected.Labels = map[string]string{appsv1alpha1.DeletionProtectionKey: appsv1alpha1.DeletionProtectionTypeAlways}

	withPods := func(names ...string) *appsv1alpha1.CloneSet {
		c := cs.DeepCopy()
		c.Spec.ScaleStrategy.PodsToDelete = names
		return c
	}
	manyNames := []string{"web-mine"}
	for i := range 999 {
		manyNames = append(manyNames, fmt.Sprintf("web-none-%03d", i))
	}
	tests := []struct {
		name          string
		gates         string
		op            admissionv1.Operation
		namespace     *string
		obj, old      *appsv1alpha1.CloneSet
		wantAllowed   bool
		wantCode      int32
		wantMessage   []string
		wantLiveReads int
	}{
		{name: "a valid CloneSet is allowed", op: admissionv1.Create, obj: cs, wantAllowed: true},
		{
			name: "an invalid CloneSet is refused as unprocessable", op: admissionv1.Create,
			obj:      func() *appsv1alpha1.CloneSet { c := cs.DeepCopy(); c.Spec.Replicas = ptr.To[int32](-1); return c }(),
			wantCode: 422,
		},
		{
			name: "a new CloneSet whose pods' revision label would pass 63 characters is refused naming metadata.name", op: admissionv1.Create,
			obj:         func() *appsv1alpha1.CloneSet { c := cs.DeepCopy(); c.Name = strings.Repeat("w", 53); return c }(),
			wantCode:    422,
			wantMessage: []string{"metadata.name: Invalid value", "must be no more than 52 characters"},
		},
		{
			name: "with CloneSetShortHash a 53-character name is allowed, the label holding only the hash", gates: "CloneSetShortHash=true", op: admissionv1.Create,
			obj:         func() *appsv1alpha1.CloneSet { c := cs.DeepCopy(); c.Name = strings.Repeat("w", 53); return c }(),
			wantAllowed: true,
		},
		{name: "podsToDelete naming its own pod from the cache is allowed without an API read", op: admissionv1.Update, obj: withPods("web-mine"), old: cs, wantAllowed: true},
		{name: "podsToDelete naming its own pod the cache has not seen yet is allowed after one API read", op: admissionv1.Update, obj: withPods("web-fresh"), old: cs, wantAllowed: true, wantLiveReads: 1},
		{
			name: "podsToDelete naming a foreign pod is refused", op: admissionv1.Update, obj: withPods("web-foreign"), old: cs, wantCode: 422,
			wantMessage: []string{`spec.scaleStrategy.podsToDelete: Invalid value: "web-foreign": must name existing pods of this CloneSet; 1 listed are not`},
		},
		{
			name: "podsToDelete naming no pod is refused with the same message as a foreign pod", op: admissionv1.Update, obj: withPods("web-none"), old: cs, wantCode: 422,
			wantMessage:   []string{`spec.scaleStrategy.podsToDelete: Invalid value: "web-none": must name existing pods of this CloneSet; 1 listed are not`},
			wantLiveReads: 1,
		},
		{
			name: "podsToDelete naming a pod in another namespace is refused as if it did not exist", op: admissionv1.Update, obj: withPods("web-elsewhere"), old: cs, wantCode: 422,
			wantMessage:   []string{`spec.scaleStrategy.podsToDelete: Invalid value: "web-elsewhere": must name existing pods of this CloneSet; 1 listed are not`},
			wantLiveReads: 1,
		},
		{
			name: "1000 podsToDelete names, 999 of them no pod, are refused listing the first of them and costing no API read", op: admissionv1.Update,
			obj: withPods(manyNames...), old: cs, wantCode: 422,
			wantMessage: []string{"web-none-000, web-none-001", "web-none-019 and 979 more", "999 listed are not"},
		},
		{
			name: "an object in another namespace than the request's is refused before anything is read", op: admissionv1.Update,
			obj: func() *appsv1alpha1.CloneSet { c := withPods("web-elsewhere"); c.Namespace = "other"; return c }(), old: cs, wantCode: 400,
			wantMessage: []string{`metadata.namespace: Invalid value: "other": must be the namespace of the admission request, "ns"`},
		},
		{
			name: "a request that names no namespace is refused", op: admissionv1.Update, namespace: ptr.To(""),
			obj: withPods("web-mine"), old: cs, wantCode: 400, wantMessage: []string{"metadata.namespace: Required value"},
		},
		{name: "deleting a protected CloneSet is forbidden with the protection gate on", gates: "ResourcesDeletionProtection=true", op: admissionv1.Delete, old: protected, wantCode: 403},
		{name: "deleting a protected CloneSet is allowed with the protection gate at its default, off", op: admissionv1.Delete, old: protected, wantAllowed: true},
		{name: "deleting an unprotected CloneSet is allowed", op: admissionv1.Delete, old: cs, wantAllowed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cached := &webhooktest.CountingReader{Reader: fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(mine, foreign, elsewhere).Build()}
			live := &webhooktest.CountingReader{Reader: fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(mine, foreign, fresh, elsewhere).Build()}
			g := gates(t, tt.gates)
			h := NewValidatingHandler(admission.NewDecoder(apis.NewScheme()), cached, live, g, deletionprotection.NewGuard(g, nil, false))
			var obj, old runtime.Object
			if tt.obj != nil {
				obj = tt.obj
			}
			if tt.old != nil {
				old = tt.old
			}
			req := request(t, tt.op, obj, old)
			if tt.namespace != nil {
				req.Namespace = *tt.namespace
			}
			resp := h.Handle(context.Background(), req)
			var code int32
			var msg string
			if resp.Result != nil && !resp.Allowed {
				code, msg = resp.Result.Code, resp.Result.Message
			}
			if diff := cmp.Diff([]any{tt.wantAllowed, tt.wantCode, tt.wantLiveReads}, []any{resp.Allowed, code, live.Reads}); diff != "" {
				t.Errorf("allowed, code, API reads (-want +got):\n%s\nresult: %v", diff, resp.Result)
			}
			for _, want := range tt.wantMessage {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not contain %q", msg, want)
				}
			}
		})
	}
}

func sortStrings(s []string) { sort.Strings(s) }
