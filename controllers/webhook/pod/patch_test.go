package pod

import (
	"context"
	"encoding/json"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// TestMutatingPatchGivesThePodThatEncodingTheWholePodGives proves that the patch /mutate-pod
// writes from what its steps changed leaves the same pod as encoding the whole mutated pod and
// diffing it against the request (the form the handler answered with before): for each pod, the
// handler's patch applied to the request is compared, as JSON, with the request patched by
// admission.PatchResponseFromRaw to the pod the same steps leave.
func TestMutatingPatchGivesThePodThatEncodingTheWholePodGives(t *testing.T) {
	patchedJob := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "patched", Namespace: admissionNamespace, UID: "uid-job-patched"}}
	subsetPatch := kinds.WorkloadSpread("bench-adm-patched", admissionNamespace).Target("batch/v1", "Job", "patched").
		ZoneSubset("a", "zone-a", "").SubsetPatch(`{"metadata":{"labels":{"subset":"a"},"annotations":{"example.com/subset":"a"}},` +
		`"spec":{"priorityClassName":"high","tolerations":[{"key":"zone","operator":"Equal","value":"a","effect":"NoSchedule"}]}}`).Obj()
	subsetPatch.UID, subsetPatch.Generation = "uid-ws-patched", 1
	h := admissionHandler(t, patchedJob, subsetPatch)

	type tcase struct {
		pod         *corev1.Pod
		dryRun      bool
		wantPatched bool
	}
	withOwnAnnotations := jobPod("web")
	withOwnAnnotations.Annotations = map[string]string{"example.com/owner": "team-a", "a~b": "x"}
	withoutNamespace := builder.Pod("cs-0", "").OwnedBy(metav1.OwnerReference{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet",
		Name: "cs", UID: types.UID("uid-cs"), Controller: ptr.To(true)}).Obj()
	testkit.Cases(t, map[string]tcase{
		"five SidecarSets inject into a pod without annotations":                         {pod: jobPod("web"), wantPatched: true},
		"five SidecarSets inject beside annotations of the pod's own, keys with / and ~": {pod: withOwnAnnotations, wantPatched: true},
		"a WorkloadSpread puts the pod into one of its subsets, beside five SidecarSets": {pod: jobPod("spread"), dryRun: true, wantPatched: true},
		"a subset's patch sets labels, annotations, tolerations and a priority class":    {pod: jobPod("patched"), wantPatched: true},
		"a CloneSet's pod sent without a namespace gets its readiness gates":             {pod: withoutNamespace, wantPatched: true},
		"a pod nothing selects is admitted without a patch":                              {pod: jobPod("lonely")},
	}, func(t *testing.T, tt tcase) {
		req := webhooktest.ObjectRequest(t, admissionv1.Create, tt.pod, nil)
		req.Namespace, req.DryRun = admissionNamespace, ptr.To(tt.dryRun)
		resp := h.Handle(context.Background(), req)
		if !resp.Allowed {
			t.Fatalf("refused: %v", resp.Result)
		}
		testkit.Diff(t, "patched", tt.wantPatched, len(resp.Patches) > 0)
		got, err := webhooktest.Apply(req.Object.Raw, resp)
		if err != nil {
			t.Fatal(err)
		}

		// The same steps on the same pod, answered by encoding the whole pod and diffing.
		pod := &corev1.Pod{}
		if err := json.Unmarshal(req.Object.Raw, pod); err != nil {
			t.Fatal(err)
		}
		if pod.Namespace == "" {
			pod.Namespace = req.Namespace
		}
		for _, s := range h.steps {
			if _, err := s.Mutate(context.Background(), req, pod); err != nil {
				t.Fatal(err)
			}
		}
		raw, err := json.Marshal(pod)
		if err != nil {
			t.Fatal(err)
		}
		want, err := webhooktest.Apply(req.Object.Raw, admission.PatchResponseFromRaw(req.Object.Raw, raw))
		if err != nil {
			t.Fatal(err)
		}
		var gotDoc, wantDoc any
		if err := json.Unmarshal(got, &gotDoc); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(want, &wantDoc); err != nil {
			t.Fatal(err)
		}
		testkit.Diff(t, "patched pod", wantDoc, gotDoc)
	})
}
