package statefulset

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// withClaims adds a volume claim template "data" mounted at /data.
func withClaims(s *appsv1beta1.StatefulSet) {
	s.Spec.VolumeClaimTemplates = append(s.Spec.VolumeClaimTemplates, corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	})
	c := &s.Spec.Template.Spec.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "data", MountPath: "/data"})
}

func retention(whenDeleted, whenScaled appsv1beta1.PersistentVolumeClaimRetentionPolicyType) func(*appsv1beta1.StatefulSet) {
	return func(s *appsv1beta1.StatefulSet) {
		s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1beta1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: whenDeleted, WhenScaled: whenScaled}
	}
}

// claims returns the PVCs of ns that are not being deleted, by name, with their UIDs.
func claims(ctx context.Context, ns string) (map[string]string, error) {
	var list corev1.PersistentVolumeClaimList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, c := range list.Items {
		if c.DeletionTimestamp == nil {
			out[c.Name] = string(c.UID)
		}
	}
	return out, nil
}

func claimNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func waitClaims(t *testing.T, ns string, want ...string) map[string]string {
	t.Helper()
	sort.Strings(want)
	var got map[string]string
	framework.Eventually(t, rollout, fmt.Sprintf("claims are %v", want), func(ctx context.Context) error {
		var err error
		if got, err = claims(ctx, ns); err != nil {
			return err
		}
		return framework.Want(fmt.Sprint(claimNames(got)) == fmt.Sprint(want), fmt.Sprint(claimNames(got)))
	})
	return got
}

func TestShouldPerformRollingUpdatesAndRollBacksOfTemplateModificationsWithPVCs(t *testing.T) {
	ns := newNamespace(t)
	createSettled(t, newSet("ss", ns, 2, withClaims), "ss-0", "ss-1")
	before := waitClaims(t, ns, "data-ss-0", "data-ss-1")
	for _, p := range framework.MustLivePods(t, env.Client, ns, "ss") {
		if v := p.Spec.Volumes[len(p.Spec.Volumes)-1]; v.Name != "data" || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "data-"+p.Name {
			t.Errorf("pod %s mounts %+v; want claim data-%s", p.Name, v, p.Name)
		}
	}
	change(t, ns, "ss", setImage(imageV2))
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1")
	waitImages(t, ns, "ss", imageV2, 2)
	after := waitClaims(t, ns, "data-ss-0", "data-ss-1")
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("claims changed across the recreate: %v → %v; a recreated pod reuses its ordinal's claims", before, after)
	}
}

func TestShouldDeletePVCsWithAOnScaledownPolicyAndRangeReserveOrdinals(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, newSet("ss", ns, 6, parallel, withClaims,
		retention(appsv1beta1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1beta1.DeletePersistentVolumeClaimRetentionPolicyType)))
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1", "ss-2", "ss-3", "ss-4", "ss-5")
	waitClaims(t, ns, "data-ss-0", "data-ss-1", "data-ss-2", "data-ss-3", "data-ss-4", "data-ss-5")

	// Reserving [0, 2-5] moves the replicas to 1, 6, 7, 8, 9, 10 and deletes the claims of the
	// reserved ordinals with their pods.
	change(t, ns, "ss", func(s *appsv1beta1.StatefulSet) {
		s.Spec.ReserveOrdinals = []intstr.IntOrString{intstr.FromInt32(0), intstr.FromString("2-5")}
	})
	waitSettled(t, ns, "ss", rollout, "ss-1", "ss-6", "ss-7", "ss-8", "ss-9", "ss-10")
	waitClaims(t, ns, "data-ss-1", "data-ss-6", "data-ss-7", "data-ss-8", "data-ss-9", "data-ss-10")

	// A plain scale-down deletes the claims of the removed ordinals too.
	change(t, ns, "ss", replicas(2))
	waitSettled(t, ns, "ss", rollout, "ss-1", "ss-6")
	waitClaims(t, ns, "data-ss-1", "data-ss-6")
}

func TestRetainedPVCsOutliveAScaleDownAndAreReusedOnScaleUp(t *testing.T) {
	ns := newNamespace(t)
	createSettled(t, newSet("ss", ns, 2, parallel, withClaims), "ss-0", "ss-1")
	before := waitClaims(t, ns, "data-ss-0", "data-ss-1")
	change(t, ns, "ss", replicas(1))
	waitSettled(t, ns, "ss", rollout, "ss-0")
	change(t, ns, "ss", replicas(2))
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1")
	after := waitClaims(t, ns, "data-ss-0", "data-ss-1")
	if before["data-ss-1"] != after["data-ss-1"] {
		t.Errorf("data-ss-1 was made again; with whenScaled Retain the new ss-1 reuses it")
	}
}

// gcOnce starts kube-controller-manager's garbage collector for the tests that need it.
var gcOnce struct {
	sync.Once
	err error
}

func startGC(t *testing.T) {
	t.Helper()
	gcOnce.Do(func() {
		gcOnce.err = env.StartKubeControllers(context.Background(), framework.WithoutKubeScheduler(), framework.WithControllers("garbage-collector-controller"))
	})
	if gcOnce.err != nil {
		t.Fatalf("start kube-controller-manager's garbage collector: %v", gcOnce.err)
	}
}

func TestShouldDeletePVCsWithAWhenDeletedPolicy(t *testing.T) {
	startGC(t)
	ns := newNamespace(t)
	framework.Create(t, env.Client, newSet("ss", ns, 2, parallel, withClaims,
		retention(appsv1beta1.DeletePersistentVolumeClaimRetentionPolicyType, appsv1beta1.RetainPersistentVolumeClaimRetentionPolicyType)))
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1")
	waitClaims(t, ns, "data-ss-0", "data-ss-1")
	if err := env.Client.Delete(context.Background(), mustGetSet(t, ns, "ss")); err != nil {
		t.Fatal(err)
	}
	waitClaims(t, ns)
}

func TestShouldDeletePVCsAfterAdoptingPodWhenDeleted(t *testing.T) {
	startGC(t)
	ns := newNamespace(t)
	// A claim made before the set, as if left by an earlier one, is taken over and owned.
	pre := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data-ss-0", Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	framework.Create(t, env.Client, pre)
	framework.Create(t, env.Client, newSet("ss", ns, 1, withClaims,
		retention(appsv1beta1.DeletePersistentVolumeClaimRetentionPolicyType, appsv1beta1.RetainPersistentVolumeClaimRetentionPolicyType)))
	waitSettled(t, ns, "ss", rollout, "ss-0")
	got := waitClaims(t, ns, "data-ss-0")
	if got["data-ss-0"] != string(pre.UID) {
		t.Errorf("data-ss-0 was made again; the existing claim must be reused")
	}
	if err := env.Client.Delete(context.Background(), mustGetSet(t, ns, "ss")); err != nil {
		t.Fatal(err)
	}
	waitClaims(t, ns)
}

func TestPVCShouldBeRecreatedWhenPodIsPendingDueToMissingPVC(t *testing.T) {
	ns := newNamespace(t)
	// A pending pod of the set's ordinal 0 whose claim does not exist, as after someone deleted
	// the claim while the pod waited to start.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "ss-0", Namespace: ns, Labels: map[string]string{"app": "ss"},
			Annotations: map[string]string{framework.AnnotationStartDelay: "1h"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: imageV1, VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-ss-0"}}}},
		},
	}
	framework.Create(t, env.Client, pod)
	framework.Create(t, env.Client, newSet("ss", ns, 1, withClaims))
	waitClaims(t, ns, "data-ss-0")
	p, err := getPod(context.Background(), ns, "ss-0")
	if err != nil {
		t.Fatal(err)
	}
	if p.UID != pod.UID || p.Status.Phase != corev1.PodPending {
		t.Errorf("ss-0 is %s in phase %s; want the same pending pod, given its claim", p.UID, p.Status.Phase)
	}
}
