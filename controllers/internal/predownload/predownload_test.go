package predownload

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func workload(mut func(*Workload)) Workload {
	w := Workload{
		Owner:    &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u1"}},
		GVK:      appsv1alpha1.GroupVersion.WithKind("CloneSet"),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"team": "a"}},
			Spec:       corev1.PodSpec{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}},
		},
		Replicas: 10, MaxUnavailable: 2, CanInPlace: true,
	}
	if mut != nil {
		mut(&w)
	}
	return w
}

func rev(labels map[string]string) *appsv1.ControllerRevision {
	l := map[string]string{appsv1.ControllerRevisionHashLabelKey: "abc"}
	for k, v := range labels {
		l[k] = v
	}
	return &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-abc", Labels: l}}
}

func TestDecide(t *testing.T) {
	type tcase struct {
		w    Workload
		rev  *appsv1.ControllerRevision
		want Outcome
	}
	tests := map[string]tcase{
		"an in-place update in several batches of a large enough workload creates jobs": {
			w: workload(nil), rev: rev(nil), want: Create,
		},
		"a revision whose jobs were created is decided": {
			w: workload(nil), rev: rev(map[string]string{appsv1alpha1.ImagePreDownloadCreatedKey: "true"}), want: Decided,
		},
		"a revision that was ignored is decided": {
			w: workload(nil), rev: rev(map[string]string{appsv1alpha1.ImagePreDownloadIgnoredKey: "true"}), want: Decided,
		},
		"a recreating update strategy is ignored": {
			w: workload(func(w *Workload) { w.Recreate = true }), rev: rev(nil), want: Ignore,
		},
		"three replicas are ignored": {
			w: workload(func(w *Workload) { w.Replicas, w.MaxUnavailable = 3, 1 }), rev: rev(nil), want: Ignore,
		},
		"four replicas create jobs": {
			w: workload(func(w *Workload) { w.Replicas, w.MaxUnavailable = 4, 1 }), rev: rev(nil), want: Create,
		},
		"every pod in one batch is ignored": {
			w: workload(func(w *Workload) { w.MaxUnavailable = 10 }), rev: rev(nil), want: Ignore,
		},
		"one batch held back by a partition still creates jobs": {
			w: workload(func(w *Workload) { w.MaxUnavailable, w.Partition = 10, 5 }), rev: rev(nil), want: Create,
		},
		"a revision that cannot update in place is ignored": {
			w: workload(func(w *Workload) { w.CanInPlace = false }), rev: rev(nil), want: Ignore,
		},
		"a DaemonSet's recreating update of three pods that cannot go in place creates jobs": {
			w: workload(func(w *Workload) {
				w.AnyUpdate, w.Replicas, w.MaxUnavailable, w.Recreate, w.CanInPlace = true, 3, 1, true, false
			}),
			rev: rev(nil), want: Create,
		},
		"a DaemonSet's update of every pod in one batch is ignored": {
			w: workload(func(w *Workload) { w.AnyUpdate, w.MaxUnavailable = true, 10 }), rev: rev(nil), want: Ignore,
		},
		"a DaemonSet's update in one batch held back by a partition creates jobs": {
			w: workload(func(w *Workload) { w.AnyUpdate, w.MaxUnavailable, w.Partition = true, 10, 1 }), rev: rev(nil), want: Create,
		},
		"a DaemonSet does not wait for updated ready pods": {
			w: workload(func(w *Workload) {
				w.AnyUpdate = true
				w.Owner.SetAnnotations(map[string]string{appsv1alpha1.ImagePreDownloadMinUpdatedReadyPods: "2"})
			}),
			rev: rev(nil), want: Create,
		},
		"too few updated ready pods wait": {
			w: workload(func(w *Workload) {
				w.Owner.SetAnnotations(map[string]string{appsv1alpha1.ImagePreDownloadMinUpdatedReadyPods: "2"})
				w.UpdatedReadyReplicas = 1
			}),
			rev: rev(nil), want: Wait,
		},
		"enough updated ready pods, as a percentage, create jobs": {
			w: workload(func(w *Workload) {
				w.Owner.SetAnnotations(map[string]string{appsv1alpha1.ImagePreDownloadMinUpdatedReadyPods: "20%"})
				w.UpdatedReadyReplicas = 2
			}),
			rev: rev(nil), want: Create,
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		got, why := Decide(tt.w, tt.rev)
		if got != tt.want {
			t.Errorf("Decide = %s (%s), want %s", got, why, tt.want)
		}
		if (got == Ignore || got == Wait) && why == "" {
			t.Errorf("%s without a reason", got)
		}
	})
}

// tmpl is a pod template of containers given as name, image pairs.
func tmpl(images ...string) *corev1.PodTemplateSpec {
	t := &corev1.PodTemplateSpec{}
	for i := 0; i < len(images); i += 2 {
		t.Spec.Containers = append(t.Spec.Containers, corev1.Container{Name: images[i], Image: images[i+1]})
	}
	return t
}

func TestChangedImages(t *testing.T) {
	got := ChangedImages(tmpl("app", "app:1", "log", "log:1"), tmpl("app", "app:2", "log", "log:1", "new", "new:1"))
	want := map[string]string{"app": "app:2", "new": "new:1"}
	testkit.Diff(t, "changed images", want, got)
}

func TestChangedSince(t *testing.T) {
	type tcase struct {
		olds []*corev1.PodTemplateSpec
		want map[string]string
	}
	newT := tmpl("app", "app:3", "log", "log:1", "new", "new:1")
	tests := map[string]tcase{
		"an image some older revision does not run is pulled, even if the newest old one runs it": {
			olds: []*corev1.PodTemplateSpec{tmpl("app", "app:1", "log", "log:1"), tmpl("app", "app:3", "log", "log:1")},
			want: map[string]string{"app": "app:3", "new": "new:1"},
		},
		"an image every older revision runs is not pulled": {
			olds: []*corev1.PodTemplateSpec{tmpl("app", "app:3", "log", "log:1", "new", "new:1")},
			want: map[string]string{},
		},
		"without an older revision every image is pulled": {
			want: map[string]string{"app": "app:3", "log": "log:1", "new": "new:1"},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		testkit.Diff(t, "changed images", tc.want, ChangedSince(newT, tc.olds...))
	})
}

func TestJobs(t *testing.T) {
	w := workload(func(w *Workload) {
		w.Owner.SetAnnotations(map[string]string{
			appsv1alpha1.ImagePreDownloadParallelismKey:    "4",
			appsv1alpha1.ImagePreDownloadTimeoutSecondsKey: "90",
		})
	})
	jobs := Jobs(w, rev(nil), map[string]string{"sidecar": "log:2", "app": "app:2"})
	if len(jobs) != 2 || jobs[0].Name != "web-abc-app" || jobs[1].Name != "web-abc-sidecar" {
		t.Fatalf("jobs %v, want web-abc-app and web-abc-sidecar", names(jobs))
	}
	j := jobs[0]
	want := appsv1alpha1.ImagePullJobSpec{Image: "app:2"}
	want.PullSecrets = []string{"pull"}
	want.PodSelector = &appsv1alpha1.ImagePullJobPodSelector{LabelSelector: metav1.LabelSelector{
		MatchLabels: map[string]string{"app": "web"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: appsv1.ControllerRevisionHashLabelKey, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"web-abc", "abc"},
		}},
	}}
	want.Parallelism = ptr.To(intstr.FromInt32(4))
	want.PullPolicy = &appsv1alpha1.PullPolicy{BackoffLimit: ptr.To[int32](1), TimeoutSeconds: ptr.To[int32](90)}
	want.CompletionPolicy = appsv1alpha1.CompletionPolicy{Type: appsv1alpha1.Always, TTLSecondsAfterFinished: ptr.To[int32](600)}
	want.SandboxConfig = &appsv1alpha1.SandboxConfig{
		Labels:      map[string]string{"app": "web", appsv1.ControllerRevisionHashLabelKey: "abc"},
		Annotations: map[string]string{"team": "a"},
	}
	testkit.Diff(t, "job spec", want, j.Spec)
	if ref := metav1.GetControllerOf(j); ref == nil || ref.UID != "u1" || ref.Kind != "CloneSet" {
		t.Errorf("controller reference %v, want the CloneSet", ref)
	}
	if j.Labels["app"] != "web" {
		t.Errorf("job labels %v do not match the workload's selector", j.Labels)
	}
	// The selector of the workload itself is not changed by building a job.
	if len(w.Selector.MatchExpressions) != 0 {
		t.Errorf("building jobs changed the workload's selector: %v", w.Selector)
	}

	def := Jobs(workload(nil), rev(nil), map[string]string{"app": "app:2"})[0]
	if def.Spec.Parallelism.IntValue() != 1 || *def.Spec.PullPolicy.TimeoutSeconds != 300 {
		t.Errorf("defaults: parallelism %v, timeout %d; want 1 and 300", def.Spec.Parallelism, *def.Spec.PullPolicy.TimeoutSeconds)
	}
}

func names(jobs []*appsv1alpha1.ImagePullJob) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Name)
	}
	return out
}
