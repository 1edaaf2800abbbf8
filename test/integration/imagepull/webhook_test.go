package imagepull

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
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
