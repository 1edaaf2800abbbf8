package statefulset

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/statefulset"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// The test bed has no volume driver: these tests play the provisioner and the resizer, writing
// a PVC's status.phase Bound and status.capacity (or the FileSystemResizePending condition) as
// a CSI driver and the kubelet would. The apiserver itself checks a resize: only a Bound claim
// may grow, and only when its StorageClass allows volume expansion.

// storageClass creates a cluster-scoped StorageClass for the test, named after ns, that does or
// does not allow volume expansion.
func storageClass(t *testing.T, ns string, expand bool) string {
	t.Helper()
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: ns}, Provisioner: "test.kruise.io/none", AllowVolumeExpansion: ptr.To(expand)}
	framework.Create(t, env.Client, sc)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), sc) })
	return sc.Name
}

// resizable gives the set a "data" claim of 1Gi of class sc, grown on the pods' rolling update.
func resizable(sc string) func(*appsv1beta1.StatefulSet) {
	return func(s *appsv1beta1.StatefulSet) {
		withClaims(s)
		s.Spec.VolumeClaimTemplates[0].Spec.StorageClassName = ptr.To(sc)
		s.Spec.VolumeClaimUpdateStrategy.Type = appsv1beta1.OnPodRollingUpdateVolumeClaimUpdateStrategyType
	}
}

// claimSize sets the "data" template's storage request.
func claimSize(size string) func(*appsv1beta1.StatefulSet) {
	return func(s *appsv1beta1.StatefulSet) {
		s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse(size)
	}
}

// bindClaims plays the provisioner: every claim of ns gets phase Bound with the capacity it
// requests.
func bindClaims(t *testing.T, ns string, names ...string) {
	t.Helper()
	for _, name := range names {
		setClaimStatus(t, ns, name, func(c *corev1.PersistentVolumeClaim) {
			c.Status.Phase = corev1.ClaimBound
			c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: c.Spec.Resources.Requests[corev1.ResourceStorage]}
		})
	}
}

// setClaimStatus waits for the claim to exist, then changes its status.
func setClaimStatus(t *testing.T, ns, name string, f func(*corev1.PersistentVolumeClaim)) {
	t.Helper()
	key := client.ObjectKey{Namespace: ns, Name: name}
	framework.WaitFor(t, env.Client, key, rollout, "claim "+name+" exists", func(*corev1.PersistentVolumeClaim) error { return nil })
	framework.ChangeStatus(t, env.Client, key, f)
}

// waitClaimRequest waits until the claim requests size.
func waitClaimRequest(t *testing.T, ns, name, size string) *corev1.PersistentVolumeClaim {
	t.Helper()
	want := resource.MustParse(size)
	return framework.WaitFor(t, env.Client, client.ObjectKey{Namespace: ns, Name: name}, rollout, fmt.Sprintf("claim %s requests %s", name, size), func(c *corev1.PersistentVolumeClaim) error {
		got := c.Spec.Resources.Requests[corev1.ResourceStorage]
		return framework.Want(got.Cmp(want) == 0, "requests "+got.String())
	})
}

// waitVolumeClaims waits until status.volumeClaims reports compatible and ready replicas of
// the "data" template.
func waitVolumeClaims(t *testing.T, ns, name string, compatible, ready int32) *appsv1beta1.StatefulSet {
	t.Helper()
	want := []appsv1beta1.VolumeClaimStatus{{VolumeClaimName: "data", CompatibleReplicas: compatible, CompatibleReadyReplicas: ready}}
	return waitSet(t, ns, name, rollout, fmt.Sprintf("status.volumeClaims is %+v", want), func(s *appsv1beta1.StatefulSet) error {
		return framework.Want(s.Status.ObservedGeneration == s.Generation && fmt.Sprint(s.Status.VolumeClaims) == fmt.Sprint(want), fmt.Sprintf("%+v", s.Status.VolumeClaims))
	})
}

// podImage is the image of the pod's first container, or "" when it is gone.
func podImage(ctx context.Context, ns, name string) (string, error) {
	pods, err := listPods(ctx, ns, "ss", false)
	if err != nil {
		return "", err
	}
	for _, p := range pods {
		if p.Name == name {
			return p.Spec.Containers[0].Image, nil
		}
	}
	return "", nil
}

func TestResizePVCOnPodRollingUpdateGrowsEachPodsClaimsAndWaitsForThemBeforeUpdatingThePod(t *testing.T) {
	ns := newNamespace(t)
	sc := storageClass(t, ns, true)
	createSettled(t, newSet("ss", ns, 2, resizable(sc)), "ss-0", "ss-1")
	bindClaims(t, ns, "data-ss-0", "data-ss-1")
	waitVolumeClaims(t, ns, "ss", 2, 2)

	change(t, ns, "ss", func(s *appsv1beta1.StatefulSet) { claimSize("2Gi")(s); setImage(imageV2)(s) })
	// The highest ordinal first: its claim grows, and the pod waits for the capacity.
	c := waitClaimRequest(t, ns, "data-ss-1", "2Gi")
	if got := c.Annotations[statefulset.OwnedByAnnotation]; got != "ss" {
		t.Errorf("resized claim has %s=%q; want ss", statefulset.OwnedByAnnotation, got)
	}
	waitVolumeClaims(t, ns, "ss", 1, 0)
	for _, pod := range []string{"ss-0", "ss-1"} {
		if img, err := podImage(context.Background(), ns, pod); err != nil || img != imageV1 {
			t.Errorf("pod %s runs %q (%v) while data-ss-1 lacks its capacity; want it left at %s", pod, img, err, imageV1)
		}
	}
	if c := waitClaimRequest(t, ns, "data-ss-0", "1Gi"); c.Annotations[statefulset.OwnedByAnnotation] != "" {
		t.Errorf("data-ss-0 was touched before ss-1 was updated: %v", c.Annotations)
	}

	// The resizer reports the new capacity: ss-1 is updated, then ss-0's claim grows.
	bindClaims(t, ns, "data-ss-1")
	framework.Eventually(t, rollout, "ss-1 runs "+imageV2, func(ctx context.Context) error {
		img, err := podImage(ctx, ns, "ss-1")
		return firstError(err, framework.Want(img == imageV2, "image "+img))
	})
	waitClaimRequest(t, ns, "data-ss-0", "2Gi")

	// A file system resize pending on the node is enough: the pod starts again to finish it.
	setClaimStatus(t, ns, "data-ss-0", func(c *corev1.PersistentVolumeClaim) {
		c.Status.Conditions = []corev1.PersistentVolumeClaimCondition{{Type: corev1.PersistentVolumeClaimFileSystemResizePending, Status: corev1.ConditionTrue}}
	})
	framework.Eventually(t, rollout, "ss-0 runs "+imageV2, func(ctx context.Context) error {
		img, err := podImage(ctx, ns, "ss-0")
		return firstError(err, framework.Want(img == imageV2, "image "+img))
	})
	waitVolumeClaims(t, ns, "ss", 2, 1)
	setClaimStatus(t, ns, "data-ss-0", func(c *corev1.PersistentVolumeClaim) {
		c.Status.Conditions = nil
		c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}
	})
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1")
	waitVolumeClaims(t, ns, "ss", 2, 2)
	framework.WaitForEvent(t, env.Client, ns, rollout, "a SuccessfulResize event", func(e *corev1.Event) bool {
		return e.Reason == "SuccessfulResize" && e.InvolvedObject.Name == "ss"
	})
}

func TestResizePVCOnlyGrowsTheClaimsOfPodsAtTheUpdateRevisionWithoutRecreatingThem(t *testing.T) {
	ns := newNamespace(t)
	sc := storageClass(t, ns, true)
	createSettled(t, newSet("ss", ns, 2, resizable(sc)), "ss-0", "ss-1")
	bindClaims(t, ns, "data-ss-0", "data-ss-1")
	before := framework.MustLivePods(t, env.Client, ns, "ss")

	change(t, ns, "ss", claimSize("2Gi"))
	waitClaimRequest(t, ns, "data-ss-1", "2Gi")
	bindClaims(t, ns, "data-ss-1")
	waitClaimRequest(t, ns, "data-ss-0", "2Gi")
	bindClaims(t, ns, "data-ss-0")
	waitVolumeClaims(t, ns, "ss", 2, 2)
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1")
	assertPodsKept(t, ns, before, "for a resize alone")
}

func TestResizePVCWithOnDeleteLeavesExistingClaimsAlone(t *testing.T) {
	ns := newNamespace(t)
	sc := storageClass(t, ns, true)
	createSettled(t, newSet("ss", ns, 1, resizable(sc), func(s *appsv1beta1.StatefulSet) {
		s.Spec.VolumeClaimUpdateStrategy.Type = appsv1beta1.OnPVCDeleteVolumeClaimUpdateStrategyType
	}), "ss-0")
	bindClaims(t, ns, "data-ss-0")
	change(t, ns, "ss", func(s *appsv1beta1.StatefulSet) { claimSize("2Gi")(s); setImage(imageV2)(s) })
	waitSettled(t, ns, "ss", rollout, "ss-0")
	waitImages(t, ns, "ss", imageV2, 1)
	waitClaimRequest(t, ns, "data-ss-0", "1Gi")
	// status.volumeClaims reports the claim as behind its template.
	waitVolumeClaims(t, ns, "ss", 0, 0)
}

// assertPodsKept checks that each of the pods before is still live with the same UID: none was
// recreated (why says what it was recreated for).
func assertPodsKept(t *testing.T, ns string, before []corev1.Pod, why string) {
	t.Helper()
	after := map[string]types.UID{}
	for _, p := range framework.MustLivePods(t, env.Client, ns, "ss") {
		after[p.Name] = p.UID
	}
	for _, p := range before {
		if after[p.Name] != p.UID {
			t.Errorf("pod %s was recreated %s; want it kept", p.Name, why)
		}
	}
}

// firstError is the first of errs that is not nil.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func TestResizePVCWithAStorageClassThatCannotExpandIsRefused(t *testing.T) {
	ns := newNamespace(t)
	sc := storageClass(t, ns, false)
	framework.Create(t, env.Client, newSet("ss", ns, 1, resizable(sc)))
	// TryChange retries conflicts with the controller's own writes to the new set, so the error
	// left is the admission's answer.
	err := framework.TryChange(context.Background(), env.Client, client.ObjectKey{Namespace: ns, Name: "ss"}, claimSize("2Gi"))
	if err == nil || !strings.Contains(err.Error(), "spec.volumeClaimTemplates[0].spec.resources.requests.storage") || !strings.Contains(err.Error(), "allowVolumeExpansion") {
		t.Fatalf("update error %v; want a refusal naming spec.volumeClaimTemplates[0].spec.resources.requests.storage and allowVolumeExpansion", err)
	}
}

func TestResizePVCInPlaceWithSCCanExpandGrowsTheClaimsThenUpdatesThePodsInPlace(t *testing.T) {
	ns := newNamespace(t)
	sc := storageClass(t, ns, true)
	createSettled(t, newSet("ss", ns, 2, resizable(sc), inPlace(appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType)), "ss-0", "ss-1")
	bindClaims(t, ns, "data-ss-0", "data-ss-1")
	before := framework.MustLivePods(t, env.Client, ns, "ss")

	change(t, ns, "ss", func(s *appsv1beta1.StatefulSet) { claimSize("2Gi")(s); setImage(imageV2)(s) })
	waitClaimRequest(t, ns, "data-ss-1", "2Gi")
	bindClaims(t, ns, "data-ss-1")
	waitClaimRequest(t, ns, "data-ss-0", "2Gi")
	bindClaims(t, ns, "data-ss-0")
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1")
	waitImages(t, ns, "ss", imageV2, 2)
	waitVolumeClaims(t, ns, "ss", 2, 2)
	assertPodsKept(t, ns, before, "instead of being updated in place once its claims grew")
}
