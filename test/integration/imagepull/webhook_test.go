package imagepull

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/google/go-cmp/cmp"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/apis/kinds"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// TestWebhooksRefuseInvalidJobs checks the apiserver asks the manager's validating webhooks and
// refuses what they refuse, naming the field.
func TestWebhooksRefuseInvalidJobs(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pull-", nil)
	ctx := context.Background()

	// The schema cannot parse image references; the webhook does.
	bad := pullJob(ns, "bad-image", "registry.example.com/app::v1", onNodes("node-0"))
	err := env.Client.Create(ctx, bad)
	if err == nil || !strings.Contains(err.Error(), `admission webhook "vimagepulljob.kb.io" denied the request`) ||
		!strings.Contains(err.Error(), "spec.image") {
		t.Errorf("ImagePullJob with an unparsable image: err %v, want a denial by vimagepulljob.kb.io naming spec.image", err)
	}

	dup := &appsv1alpha1.ImageListPullJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad-image"},
		Spec: appsv1alpha1.ImageListPullJobSpec{Images: []string{"registry.example.com/a:v1", "registry.example.com/b::v1"}}}
	dup.Spec.CompletionPolicy.Type = appsv1alpha1.Always
	err = env.Client.Create(ctx, dup)
	if err == nil || !strings.Contains(err.Error(), `admission webhook "vimagelistpulljob.kb.io" denied the request`) ||
		!strings.Contains(err.Error(), "spec.images[1]") {
		t.Errorf("ImageListPullJob with an unparsable second image: err %v, want a denial by vimagelistpulljob.kb.io naming spec.images[1]", err)
	}

	ok := pullJob(ns, "valid", "registry.example.com/app:v1", onNodes("node-0"))
	framework.CreateForTest(t, env.Client, ok)
}

// TestImagePullJobIsCreatedWithItsProtectionFinalizer checks the defaulting webhook puts the
// job's protection finalizer on at creation, as 1.8 does: the object the create answers with
// holds it, before any controller could have acted on the job.
func TestImagePullJobIsCreatedWithItsProtectionFinalizer(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pull-", nil)
	job := pullJob(ns, "protected", "registry.example.com/app:v1", onNodes("node-0"))
	framework.CreateForTest(t, env.Client, job)
	if diff := cmp.Diff([]string{kinds.ImagePullJobFinalizer}, job.Finalizers); diff != "" {
		t.Errorf("finalizers of the created job (-want +got):\n%s", diff)
	}
	if job.Spec.PullPolicy == nil || ptr.Deref(job.Spec.PullPolicy.TimeoutSeconds, 0) != 600 || ptr.Deref(job.Spec.PullPolicy.BackoffLimit, 0) != 3 {
		t.Errorf("pullPolicy of the created job = %+v, want timeoutSeconds 600 and backoffLimit 3", job.Spec.PullPolicy)
	}
}

// TestNodeImageTagsAreStoredSortedAndStamped checks the NodeImage defaulting webhook through the
// apiserver: the tags of an image are stored sorted by name whatever order they are written in,
// each with a createdAt. (Every rule of the validating webhook is also in the CRD's schema, which
// answers first; the unit tests of the webhook package check them.)
func TestNodeImageTagsAreStoredSortedAndStamped(t *testing.T) {
	ctx := context.Background()
	const image = "registry.example.com/sorted"
	ttl := func(tag string) appsv1alpha1.ImageTagSpec {
		return appsv1alpha1.ImageTagSpec{Tag: tag, PullPolicy: &appsv1alpha1.ImageTagPullPolicy{TTLSecondsAfterFinished: ptr.To[int32](0)}}
	}
	patch := func(tags ...appsv1alpha1.ImageTagSpec) error {
		body, err := json.Marshal(map[string]any{"spec": map[string]any{"images": map[string]any{image: map[string]any{"tags": tags}}}})
		if err != nil {
			t.Fatal(err)
		}
		return env.Client.Patch(ctx, &appsv1alpha1.NodeImage{ObjectMeta: metav1.ObjectMeta{Name: "node-4"}}, client.RawPatch(types.MergePatchType, body))
	}
	t.Cleanup(func() {
		body := []byte(`{"spec":{"images":{"` + image + `":null}}}`)
		if err := env.Client.Patch(ctx, &appsv1alpha1.NodeImage{ObjectMeta: metav1.ObjectMeta{Name: "node-4"}}, client.RawPatch(types.MergePatchType, body)); err != nil {
			t.Errorf("remove the test's image from node-4: %v", err)
		}
	})

	if err := patch(ttl("v3"), ttl("v1"), ttl("v2")); err != nil {
		t.Fatalf("write three tags out of order: %v", err)
	}
	ni := &appsv1alpha1.NodeImage{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "node-4"}, ni); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tag := range ni.Spec.Images[image].Tags {
		got = append(got, tag.Tag)
		if tag.CreatedAt == nil {
			t.Errorf("tag %s stored without createdAt; the webhook stamps it", tag.Tag)
		}
	}
	if diff := cmp.Diff([]string{"v1", "v2", "v3"}, got); diff != "" {
		t.Errorf("stored tags (-want +got):\n%s", diff)
	}

}
