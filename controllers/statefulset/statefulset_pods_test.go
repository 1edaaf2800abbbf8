package statefulset

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func TestNewPodCarriesTheStatefulIdentity(t *testing.T) {
	set := kinds.StatefulSet("web", "ns").Obj()
	set.UID = "set-uid"
	set.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec:       corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	}}
	data, err := revision.TemplatePatch(set.Spec.Template)
	if err != nil {
		t.Fatal(err)
	}
	rev := revision.New(set, controllerKind, set.Spec.Template.Labels, data, 1, nil)
	rev.Name = "web-123"
	r := newReconciler(nil, nil, nil, setup.Deps{Gates: features.NewGate(), Clock: clock.RealClock{}})
	pod, err := r.newPod(&scope{set: set}, rev, 7)
	if err != nil {
		t.Fatal(err)
	}
	type identity struct {
		Name, Hostname, Subdomain, Revision, PodName, Index, Claim string
		Gates                                                      []corev1.PodReadinessGate
		Controller                                                 string
	}
	got := identity{
		Name: pod.Name, Hostname: pod.Spec.Hostname, Subdomain: pod.Spec.Subdomain,
		Revision: pod.Labels[appsv1.ControllerRevisionHashLabelKey], PodName: pod.Labels[PodNameLabel], Index: pod.Labels[PodIndexLabel],
		Gates: pod.Spec.ReadinessGates, Controller: string(metav1.GetControllerOf(pod).UID),
	}
	for _, v := range pod.Spec.Volumes {
		if v.Name == "data" && v.PersistentVolumeClaim != nil {
			got.Claim = v.PersistentVolumeClaim.ClaimName
		}
	}
	want := identity{
		Name: "web-7", Hostname: "web-7", Subdomain: "web", Revision: "web-123", PodName: "web-7", Index: "7", Claim: "data-web-7",
		Gates: []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}, Controller: "set-uid",
	}
	testkit.Diff(t, "pod identity", want, got)
}
