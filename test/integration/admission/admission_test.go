package admission

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

const (
	deniedByValidating = `admission webhook "vcloneset.kb.io" denied the request`
	image              = "registry.example.com/app:1"
)

// createCloneSet creates the CloneSet "web" of image in ns and fails the test if it is refused.
func createCloneSet(t *testing.T, ns string) *appsv1alpha1.CloneSet {
	t.Helper()
	cs := kinds.CloneSet("web", ns).Image(image).Obj()
	framework.Create(t, env.Client, cs)
	return cs
}

func newTestNamespace(t *testing.T) string {
	t.Helper()
	return framework.NewNamespace(t, env.Client, "adm-", nil)
}

// Each object here passes the CRD schema and its CEL rules; only the webhook can refuse it.
func TestInvalidCloneSetsAreRefusedNamingTheField(t *testing.T) {
	ns := newTestNamespace(t)
	tests := []struct {
		name      string
		cs        *appsv1alpha1.CloneSet
		wantField string
	}{
		{
			name: "maxSurge with InPlaceOnly",
			cs: kinds.CloneSet("surge", ns).UpdateType(appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType).
				MaxSurge(intstr.FromInt32(1)).Obj(),
			wantField: "spec.updateStrategy.maxSurge",
		},
		{
			name:      "maxUnavailable and maxSurge both 0",
			cs:        kinds.CloneSet("stuck", ns).MaxUnavailable(intstr.FromInt32(0)).MaxSurge(intstr.FromInt32(0)).Obj(),
			wantField: "spec.updateStrategy.maxUnavailable",
		},
		{
			name:      "a partition that is not a number or a percentage",
			cs:        kinds.CloneSet("half", ns).Partition(intstr.FromString("half")).Obj(),
			wantField: "spec.updateStrategy.partition",
		},
		{
			name: "template labels the selector does not match",
			cs: func() *appsv1alpha1.CloneSet {
				cs := kinds.CloneSet("labels", ns).Obj()
				cs.Spec.Template.Labels = map[string]string{"app": "other"}
				return cs
			}(),
			wantField: "spec.template.metadata.labels",
		},
		{
			name: "activeDeadlineSeconds in the template",
			cs: func() *appsv1alpha1.CloneSet {
				cs := kinds.CloneSet("deadline", ns).Obj()
				cs.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](30)
				return cs
			}(),
			wantField: "spec.template.spec.activeDeadlineSeconds",
		},
		{
			name: "two containers of the same name",
			cs: func() *appsv1alpha1.CloneSet {
				cs := kinds.CloneSet("twins", ns).Image(image).Obj()
				cs.Spec.Template.Spec.Containers = append(cs.Spec.Template.Spec.Containers, cs.Spec.Template.Spec.Containers[0])
				return cs
			}(),
			wantField: "spec.template.spec.containers[1].name",
		},
		{
			name: "weight and order priorities together",
			cs: func() *appsv1alpha1.CloneSet {
				cs := kinds.CloneSet("priority", ns).Obj()
				cs.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{
					OrderPriority: []appspub.UpdatePriorityOrderTerm{{OrderedKey: "rank"}},
					WeightPriority: []appspub.UpdatePriorityWeightTerm{{
						Weight: 10, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
					}},
				}
				return cs
			}(),
			wantField: "spec.updateStrategy.priorityStrategy",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := env.Client.Create(context.Background(), tt.cs)
			assertDenied(t, err, tt.wantField)
			got := &appsv1alpha1.CloneSet{}
			if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(tt.cs), got); err == nil {
				t.Errorf("the refused CloneSet exists")
			}
		})
	}
}

func TestInPlaceOnlyUpdateChangingMoreThanImagesIsRefused(t *testing.T) {
	ctx := context.Background()
	ns := newTestNamespace(t)
	cs := kinds.CloneSet("web", ns).Image(image).UpdateType(appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType).Obj()
	if err := env.Client.Create(ctx, cs); err != nil {
		t.Fatalf("create: %v", err)
	}
	cs.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
	assertDenied(t, env.Client.Update(ctx, cs), "spec.template.spec.containers[0]")

	fresh := &appsv1alpha1.CloneSet{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cs), fresh); err != nil {
		t.Fatal(err)
	}
	fresh.Spec.Template.Spec.Containers[0].Image = "registry.example.com/app:2"
	if err := env.Client.Update(ctx, fresh); err != nil {
		t.Errorf("an image-only update was refused: %v", err)
	}
}

func TestValidCloneSetIsDefaulted(t *testing.T) {
	ctx := context.Background()
	ns := newTestNamespace(t)
	cs := createCloneSet(t, ns)
	got := &appsv1alpha1.CloneSet{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cs), got); err != nil {
		t.Fatal(err)
	}

	// The template is schemaless: only the webhook can have filled these.
	wantTemplate := corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: "main", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
			TerminationMessagePath:   corev1.TerminationMessagePathDefault,
			TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		}},
		RestartPolicy:                 corev1.RestartPolicyAlways,
		DNSPolicy:                     corev1.DNSClusterFirst,
		SecurityContext:               &corev1.PodSecurityContext{},
		TerminationGracePeriodSeconds: ptr.To[int64](30),
		SchedulerName:                 corev1.DefaultSchedulerName,
	}
	if diff := cmp.Diff(wantTemplate, got.Spec.Template.Spec); diff != "" {
		t.Errorf("template spec (-want +got):\n%s", diff)
	}
	wantStrategy := appsv1alpha1.CloneSetUpdateStrategy{
		Type:           appsv1alpha1.RecreateCloneSetUpdateStrategyType,
		Partition:      ptr.To(intstr.FromInt32(0)),
		MaxUnavailable: ptr.To(intstr.FromString("20%")),
		MaxSurge:       ptr.To(intstr.FromInt32(0)),
	}
	if diff := cmp.Diff(wantStrategy, got.Spec.UpdateStrategy); diff != "" {
		t.Errorf("update strategy (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(ptr.To[int32](10), got.Spec.RevisionHistoryLimit); diff != "" {
		t.Errorf("revisionHistoryLimit (-want +got):\n%s", diff)
	}
}

func TestPodsToDeleteMustNameOwnPods(t *testing.T) {
	ctx := context.Background()
	ns := newTestNamespace(t)
	cs := createCloneSet(t, ns)
	own := builder.Pod("web-own", ns).Image(image).OwnedBy(controllerRef(cs, "CloneSet")).Obj()
	foreign := builder.Pod("web-foreign", ns).Image(image).Obj()
	for _, p := range []*corev1.Pod{own, foreign} {
		if err := env.Client.Create(ctx, p); err != nil {
			t.Fatalf("create pod: %v", err)
		}
	}

	cs.Spec.ScaleStrategy.PodsToDelete = []string{"web-foreign"}
	assertDenied(t, env.Client.Update(ctx, cs), "spec.scaleStrategy.podsToDelete")

	cs.Spec.ScaleStrategy.PodsToDelete = []string{"web-missing"}
	assertDenied(t, env.Client.Update(ctx, cs), "spec.scaleStrategy.podsToDelete")

	cs.Spec.ScaleStrategy.PodsToDelete = []string{"web-own"}
	if err := env.Client.Update(ctx, cs); err != nil {
		t.Fatalf("naming its own pod was refused: %v", err)
	}
	got := &appsv1alpha1.CloneSet{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cs), got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"web-own"}, got.Spec.ScaleStrategy.PodsToDelete); diff != "" {
		t.Errorf("podsToDelete (-want +got):\n%s", diff)
	}
}

func TestDeletionProtection(t *testing.T) {
	ctx := context.Background()
	ns := newTestNamespace(t)
	cs := kinds.CloneSet("web", ns).Image(image).Obj()
	cs.Labels = map[string]string{appsv1alpha1.DeletionProtectionKey: appsv1alpha1.DeletionProtectionTypeAlways}
	if err := env.Client.Create(ctx, cs); err != nil {
		t.Fatalf("create: %v", err)
	}
	err := env.Client.Delete(ctx, cs)
	if err == nil || !strings.Contains(err.Error(), deniedByValidating) || !strings.Contains(err.Error(), appsv1alpha1.DeletionProtectionKey) {
		t.Fatalf("deleting a protected CloneSet: err = %v, want a refusal naming the label", err)
	}
	delete(cs.Labels, appsv1alpha1.DeletionProtectionKey)
	if err := env.Client.Update(ctx, cs); err != nil {
		t.Fatalf("remove the label: %v", err)
	}
	if err := env.Client.Delete(ctx, cs); err != nil {
		t.Errorf("deleting the unprotected CloneSet: %v", err)
	}
}

func TestPodReadinessGates(t *testing.T) {
	ctx := context.Background()
	ns := newTestNamespace(t)
	cs := kinds.CloneSet("web", ns).Image(image).Obj()
	bcj := kinds.BroadcastJob("job", ns).Image(image).Obj()
	for _, o := range []client.Object{cs, bcj} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("create %T: %v", o, err)
		}
	}

	t.Run("a bare pod gets no gates and becomes Ready", func(t *testing.T) {
		pod := createPod(t, builder.Pod("bare", ns).Image(image).Obj())
		if diff := cmp.Diff([]corev1.PodReadinessGate(nil), pod.Spec.ReadinessGates); diff != "" {
			t.Errorf("readiness gates (-want +got):\n%s", diff)
		}
		waitForCondition(t, pod, corev1.PodReady, corev1.ConditionTrue)
	})

	t.Run("a BroadcastJob's pod gets KruisePodReady, which the controller turns True", func(t *testing.T) {
		pod := createPod(t, builder.Pod("job-1", ns).Image(image).OwnedBy(controllerRef(bcj, "BroadcastJob")).Obj())
		want := []corev1.PodReadinessGate{{ConditionType: appspub.KruisePodReadyConditionType}}
		if diff := cmp.Diff(want, pod.Spec.ReadinessGates); diff != "" {
			t.Errorf("readiness gates (-want +got):\n%s", diff)
		}
		waitForCondition(t, pod, appspub.KruisePodReadyConditionType, corev1.ConditionTrue)
		waitForCondition(t, pod, corev1.PodReady, corev1.ConditionTrue)
	})

	t.Run("a new CloneSet pod gets both gates and both first conditions from the pod readiness controller", func(t *testing.T) {
		pod := createPod(t, builder.Pod("web-1", ns).Image(image).OwnedBy(controllerRef(cs, "CloneSet")).Obj())
		want := []corev1.PodReadinessGate{
			{ConditionType: appspub.InPlaceUpdateReady},
			{ConditionType: appspub.KruisePodReadyConditionType},
		}
		if diff := cmp.Diff(want, pod.Spec.ReadinessGates); diff != "" {
			t.Errorf("readiness gates (-want +got):\n%s", diff)
		}
		// No CloneSet controller runs here: both conditions come from the pod readiness
		// controller, so the pod becomes Ready without it.
		waitForCondition(t, pod, appspub.InPlaceUpdateReady, corev1.ConditionTrue)
		waitForCondition(t, pod, appspub.KruisePodReadyConditionType, corev1.ConditionTrue)
		waitForCondition(t, pod, corev1.PodReady, corev1.ConditionTrue)
	})

	t.Run("a CloneSet pod whose in-place update started waits for its workload's InPlaceUpdateReady", func(t *testing.T) {
		state := `{"revision":"v2","updateTimestamp":"2026-01-02T03:04:05Z"}`
		pod := createPod(t, builder.Pod("web-2", ns).Image(image).OwnedBy(controllerRef(cs, "CloneSet")).
			Annotation(appspub.InPlaceUpdateStateKey, state).Obj())
		waitForCondition(t, pod, appspub.KruisePodReadyConditionType, corev1.ConditionTrue)
		// Running, but not Ready: once an update started, InPlaceUpdateReady belongs to the
		// CloneSet controller, which does not run here.
		got := waitForCondition(t, pod, corev1.ContainersReady, corev1.ConditionTrue)
		if c := condition(got, corev1.PodReady); c == nil || c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, string(appspub.InPlaceUpdateReady)) {
			t.Fatalf("Ready = %+v, want False waiting for %s", c, appspub.InPlaceUpdateReady)
		}

		// Stand in for the CloneSet controller.
		orig := got.DeepCopy()
		got.Status.Conditions = append(got.Status.Conditions, corev1.PodCondition{
			Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now(),
		})
		if err := env.Client.Status().Patch(ctx, got, client.StrategicMergeFrom(orig)); err != nil {
			t.Fatalf("set %s: %v", appspub.InPlaceUpdateReady, err)
		}
		waitForCondition(t, pod, corev1.PodReady, corev1.ConditionTrue)
	})
}

func assertDenied(t *testing.T, err error, field string) {
	t.Helper()
	framework.WantRefused(t, err, deniedByValidating, field+":")
}

// controllerRef makes o, an apps.kruise.io/v1alpha1 object of kind, the controller of a pod.
// (The client clears an object's type meta once it is created, so the kind is passed.)
func controllerRef(o client.Object, kind string) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: appsv1alpha1.GroupVersion.String(), Kind: kind, Name: o.GetName(), UID: o.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
}

func createPod(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	if err := env.Client.Create(context.Background(), pod); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	return pod
}

// waitForCondition waits until the pod has the condition with the status and returns the pod.
func waitForCondition(t *testing.T, pod *corev1.Pod, ct corev1.PodConditionType, status corev1.ConditionStatus) *corev1.Pod {
	t.Helper()
	got := &corev1.Pod{}
	framework.Eventually(t, framework.Medium, fmt.Sprintf("pod %s condition %s is %s", pod.Name, ct, status), func(context.Context) error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(pod), got); err != nil {
			return err
		}
		if c := condition(got, ct); c == nil || c.Status != status {
			return fmt.Errorf("pod %s condition %s = %+v, want %s", pod.Name, ct, c, status)
		}
		return nil
	})
	return got
}

func condition(pod *corev1.Pod, ct corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == ct {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}
