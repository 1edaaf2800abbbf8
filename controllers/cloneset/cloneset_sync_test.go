package cloneset

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podowner"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestPlanInputTellsRecreatesAndClaimReuse(t *testing.T) {
	named := func(name string, opts ...func(*corev1.Pod)) *corev1.Pod {
		return statusPod("web-new", true, append([]func(*corev1.Pod){func(p *corev1.Pod) { p.Name = name }}, opts...)...)
	}
	marked := func(value string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Labels[appsv1alpha1.SpecifiedDeleteKey] = value }
	}
	withClaims := func(cs *appsv1alpha1.CloneSet) {
		cs.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{}}
	}
	type got struct {
		ReuseClaims         bool
		Specified, Recreate []string
	}
	type tcase struct {
		cs   func(*appsv1alpha1.CloneSet)
		pods []*corev1.Pod
		want got
	}
	tests := map[string]tcase{
		"a CloneSet without volumeClaimTemplates has no claims for a replacement to reuse": {
			cs:   func(*appsv1alpha1.CloneSet) {},
			want: got{},
		},
		"a CloneSet with volumeClaimTemplates has its recreates' replacements reuse their claims": {
			cs:   withClaims,
			want: got{ReuseClaims: true},
		},
		"scaleStrategy.disablePVCReuse gives replacements new claims": {
			cs:   func(cs *appsv1alpha1.CloneSet) { withClaims(cs); cs.Spec.ScaleStrategy.DisablePVCReuse = true },
			want: got{},
		},
		"a pod the CloneSet marked for a recreate is a recreate": {
			cs:   withClaims,
			pods: []*corev1.Pod{named("a", marked(recreateMark)), named("b")},
			want: got{ReuseClaims: true, Specified: []string{"a"}, Recreate: []string{"a"}},
		},
		"a pod with the specified-delete label of any other value is the user's deletion": {
			cs:   withClaims,
			pods: []*corev1.Pod{named("a", marked("true"))},
			want: got{ReuseClaims: true, Specified: []string{"a"}},
		},
		"a pod marked for a recreate that the user names in podsToDelete is the user's deletion": {
			cs:   func(cs *appsv1alpha1.CloneSet) { withClaims(cs); cs.Spec.ScaleStrategy.PodsToDelete = []string{"a"} },
			pods: []*corev1.Pod{named("a", marked(recreateMark))},
			want: got{ReuseClaims: true, Specified: []string{"a"}},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		s := statusScope(2, tc.pods...)
		tc.cs(s.cs)
		r := &Reconciler{Base: podowner.Base{Clock: clocktesting.NewFakeClock(planNow), Gates: features.NewGate()}}
		in, err := r.planInput(s, map[types.UID]bool{})
		if err != nil {
			t.Fatalf("planInput: %v", err)
		}
		g := got{ReuseClaims: in.reuseClaims}
		for _, pi := range in.pods {
			if pi.specified {
				g.Specified = append(g.Specified, pi.pod.Name)
			}
			if pi.recreate {
				g.Recreate = append(g.Recreate, pi.pod.Name)
			}
		}
		testkit.Diff(t, "plan input", tc.want, g)
	})
}
