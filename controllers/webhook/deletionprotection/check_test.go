package deletionprotection

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

func meta(name, ns, label string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, Namespace: ns}
	if label != "" {
		m.Labels = map[string]string{Label: label}
	}
	return m
}

func TestWorkload(t *testing.T) {
	deleting := meta("web", "ns", Always)
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	tests := map[string]struct {
		meta     metav1.ObjectMeta
		replicas *int32
		// wantIn are parts of the refusal; nil means the deletion is allowed.
		wantIn []string
	}{
		"an unlabelled workload may go":                   {meta: meta("web", "ns", ""), replicas: ptr.To[int32](3)},
		"an unknown label value protects nothing":         {meta: meta("web", "ns", "Sometimes"), replicas: ptr.To[int32](3)},
		"Always refuses even at 0 replicas":               {meta: meta("web", "ns", Always), replicas: ptr.To[int32](0), wantIn: []string{"forbidden by ResourcesProtectionDeletion for " + Label + "=Always; Deployment ns/web: remove the label first"}},
		"Cascading refuses while replicas are above 0":    {meta: meta("web", "ns", Cascading), replicas: ptr.To[int32](2), wantIn: []string{"forbidden by ResourcesProtectionDeletion for " + Label + "=Cascading and replicas 2>0; Deployment ns/web: scale it to 0"}},
		"Cascading lets a workload at 0 replicas go":      {meta: meta("web", "ns", Cascading), replicas: ptr.To[int32](0)},
		"a workload already being deleted is not checked": {meta: deleting, replicas: ptr.To[int32](2)},
		"Cascading without a replica count holds nothing": {meta: meta("web", "ns", Cascading)},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			obj := &metav1.ObjectMeta{}
			*obj = tt.meta
			checkRefusal(t, Workload("Deployment", obj, tt.replicas), tt.wantIn)
		})
	}
}

func TestNamespace(t *testing.T) {
	running := builder.Pod("run", "prod").Phase(corev1.PodRunning).Obj()
	done := builder.Pod("done", "prod").Phase(corev1.PodSucceeded).Obj()
	bound := &corev1.PersistentVolumeClaim{ObjectMeta: meta("data", "prod", ""), Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}
	pending := &corev1.PersistentVolumeClaim{ObjectMeta: meta("wait", "prod", ""), Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}
	tests := map[string]struct {
		label  string
		objs   []client.Object
		wantIn []string
	}{
		"Always refuses an empty namespace":                     {label: Always, wantIn: []string{"forbidden by ResourcesProtectionDeletion for " + Label + "=Always; Namespace prod:"}},
		"Cascading refuses while a pod runs":                    {label: Cascading, objs: []client.Object{running, done}, wantIn: []string{"forbidden by ResourcesProtectionDeletion for " + Label + "=Cascading and active pods 1>0; Namespace prod:"}},
		"Cascading refuses while a claim is Bound":              {label: Cascading, objs: []client.Object{done, bound, pending}, wantIn: []string{"forbidden by ResourcesProtectionDeletion for " + Label + "=Cascading and \"Bound\" status pvc 1>0; Namespace prod:"}},
		"Cascading lets go of finished pods and pending claims": {label: Cascading, objs: []client.Object{done, pending}},
		"an unlabelled namespace may go whatever it holds":      {objs: []client.Object{running, bound}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(apis.NewScheme())
			for _, o := range tt.objs {
				b = b.WithObjects(o.DeepCopyObject().(client.Object))
			}
			ns := &corev1.Namespace{ObjectMeta: meta("prod", "", tt.label)}
			checkRefusal(t, Namespace(context.Background(), b.Build(), ns), tt.wantIn)
		})
	}
}

func TestCRDCascadingNeedsItsGate(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: meta("widgets.example.com", "", Cascading)}
	checkRefusal(t, CRD(context.Background(), fake.NewClientBuilder().Build(), crd, false), []string{"feature-gate DeletionProtectionForCRDCascadingGate is not enabled; CustomResourceDefinition widgets.example.com: turn the gate on"})
	crd.Labels[Label] = Always
	checkRefusal(t, CRD(context.Background(), fake.NewClientBuilder().Build(), crd, true), []string{"forbidden by ResourcesProtectionDeletion for " + Label + "=Always; CustomResourceDefinition widgets.example.com:"})
}

func TestAlwaysOnly(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: meta("web", "ns", Cascading)}
	checkRefusal(t, AlwaysOnly("Service", svc), nil)
	svc.Labels[Label] = Always
	checkRefusal(t, AlwaysOnly("Service", svc), []string{"forbidden by ResourcesProtectionDeletion for " + Label + "=Always; Service ns/web:"})
}

func checkRefusal(t *testing.T, err error, wantIn []string) {
	t.Helper()
	if wantIn == nil {
		if err != nil {
			t.Fatalf("refused: %v, want allowed", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("allowed, want a refusal saying %q", wantIn)
	}
	// The first part is how the refusal starts: the words clients written for OpenKruise 1.8
	// match.
	if !strings.HasPrefix(err.Error(), wantIn[0]) {
		t.Errorf("refusal %q does not start with %q", err, wantIn[0])
	}
	for _, w := range wantIn[1:] {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal %q does not say %q", err, w)
		}
	}
}
