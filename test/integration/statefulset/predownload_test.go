package statefulset

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// TestPreDownloadImageForInPlaceUpdate: an in-place image change of a StatefulSet of five pods,
// held at a partition, creates one ImagePullJob for the new image, owned by the StatefulSet and
// aimed at the pods not yet on the new revision, and labels the revision; once every pod is
// updated the job is deleted. A ReCreate set's revision is labelled ignored and gets no job.
func TestPreDownloadImageForInPlaceUpdate(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, newSet("ss", ns, 5, parallel, inPlace(appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType),
		rolling(func(ru *appsv1beta1.RollingUpdateStatefulSetStrategy) {
			ru.MaxUnavailable = ptr.To(intstr.FromInt32(1))
			ru.Partition = ptr.To[int32](4)
		})))
	framework.Create(t, env.Client, newSet("re", ns, 5, parallel))
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1", "ss-2", "ss-3", "ss-4")
	waitSettled(t, ns, "re", rollout, "re-0", "re-1", "re-2", "re-3", "re-4")

	change(t, ns, "ss", setImage(imageV2))
	change(t, ns, "re", setImage(imageV2))
	pre := harness.PreDownload{Client: env.Client, Kind: "StatefulSet", Namespace: ns, Name: "ss", Image: imageV2, Timeout: framework.Long,
		Revisions: func(ctx context.Context, name string) (harness.Revisions, error) {
			set, err := getSet(ctx, ns, name)
			if err != nil {
				return harness.Revisions{}, err
			}
			return harness.Revisions{UID: set.UID, Generation: set.Generation, ObservedGeneration: set.Status.ObservedGeneration,
				Update: set.Status.UpdateRevision, Current: set.Status.CurrentRevision}, nil
		}}
	pre.Job(t)

	pre.WaitIgnored(t, "re")

	change(t, ns, "ss", func(s *appsv1beta1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.Partition = nil })
	waitImages(t, ns, "ss", imageV2, 5)
	pre.WaitJobsDeleted(t)
}
