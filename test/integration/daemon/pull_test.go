package daemon

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/nodeimage"
	kdaemon "github.com/kruise-addon/kruise-addon/daemon"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// pullTimeout bounds one tag's way to a final phase (pulls are loopback and small).
const pullTimeout = 90 * time.Second

// policy is a tag pull policy as the manager writes it (ttlSecondsAfterFinished is required).
func policy(backoff int32) *appsv1alpha1.ImageTagPullPolicy {
	return &appsv1alpha1.ImageTagPullPolicy{BackoffLimit: ptr.To(backoff), TimeoutSeconds: ptr.To[int32](60), TTLSecondsAfterFinished: ptr.To[int32](300)}
}

// splitRef cuts host/repo:tag into the NodeImage image name and tag.
func splitRef(ref string) (string, string) {
	i := strings.LastIndex(ref, ":")
	return ref[:i], ref[i+1:]
}

// setTag adds (or replaces) one tag of one image in the real node's NodeImage spec, as the
// manager does, creating the NodeImage when it is missing.
func setTag(t *testing.T, image string, tag appsv1alpha1.ImageTagSpec, secrets ...appsv1alpha1.ReferenceObject) {
	t.Helper()
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		ni := &appsv1alpha1.NodeImage{}
		err := env.Client.Get(ctx, types.NamespacedName{Name: realNode}, ni)
		if apierrors.IsNotFound(err) {
			// No Node backs it; the label keeps a running NodeImage controller from deleting it.
			ni = &appsv1alpha1.NodeImage{ObjectMeta: metav1.ObjectMeta{Name: realNode, Labels: map[string]string{nodeimage.FakeLabel: "true"}}}
		} else if err != nil {
			return err
		}
		if ni.Spec.Images == nil {
			ni.Spec.Images = map[string]appsv1alpha1.ImageSpec{}
		}
		is := ni.Spec.Images[image]
		is.PullSecrets = secrets
		var tags []appsv1alpha1.ImageTagSpec
		for _, old := range is.Tags {
			if old.Tag != tag.Tag {
				tags = append(tags, old)
			}
		}
		is.Tags = append(tags, tag)
		ni.Spec.Images[image] = is
		if ni.ResourceVersion == "" {
			return env.Client.Create(ctx, ni)
		}
		return env.Client.Update(ctx, ni)
	})
	if err != nil {
		t.Fatalf("set tag %s:%s: %v", image, tag.Tag, err)
	}
}

// waitTag waits for the tag's status to reach a final phase and returns it.
func waitTag(t *testing.T, image, tag string) appsv1alpha1.ImageTagStatus {
	t.Helper()
	return waitTagVersion(t, image, tag, 0)
}

// waitTagVersion is waitTag for one version of the tag (0: any).
func waitTagVersion(t *testing.T, image, tag string, version int64) appsv1alpha1.ImageTagStatus {
	t.Helper()
	var got appsv1alpha1.ImageTagStatus
	framework.Eventually(t, pullTimeout, fmt.Sprintf("%s:%s reaches a final phase", image, tag), func(ctx context.Context) error {
		ni := &appsv1alpha1.NodeImage{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: realNode}, ni); err != nil {
			return err
		}
		for _, st := range ni.Status.ImageStatuses[image].Tags {
			if st.Tag == tag && (version == 0 || st.Version == version) && (st.Phase == appsv1alpha1.ImagePhaseSucceeded || st.Phase == appsv1alpha1.ImagePhaseFailed) {
				got = st
				return nil
			}
		}
		return fmt.Errorf("status %+v", ni.Status.ImageStatuses[image])
	})
	return got
}

// inContainerd reports whether the runtime lists ref among its images.
func inContainerd(t *testing.T, ref string) bool {
	t.Helper()
	resp, err := crt.Images.ListImages(context.Background(), &criv1.ListImagesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range resp.GetImages() {
		for _, tag := range img.GetRepoTags() {
			if tag == ref {
				return true
			}
		}
	}
	return false
}

func TestPullIntoContainerd(t *testing.T) {
	image, tag := splitRef(images.sleeper)
	setTag(t, image, appsv1alpha1.ImageTagSpec{Tag: tag, Version: 1, PullPolicy: policy(3)})
	st := waitTag(t, image, tag)
	if st.Phase != appsv1alpha1.ImagePhaseSucceeded || st.Progress != 100 || st.ImageID == "" || st.StartTime == nil || st.CompletionTime == nil || st.Version != 1 {
		t.Errorf("tag status %+v, want Succeeded, progress 100, an image ID, start and completion times, version 1", st)
	}
	if !inContainerd(t, images.sleeper) {
		t.Errorf("containerd does not list %s after the pull", images.sleeper)
	}
	ni := &appsv1alpha1.NodeImage{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Name: realNode}, ni); err != nil {
		t.Fatal(err)
	}
	if ni.Status.FirstSyncStatus == nil || ni.Status.Desired < 1 || ni.Status.Succeeded < 1 {
		t.Errorf("nodeimage counts %+v, want a first sync, at least one desired and succeeded", ni.Status)
	}
}

func TestPullWithBasicAuthSecret(t *testing.T) {
	cfg, _ := json.Marshal(map[string]any{"auths": map[string]any{authReg.host(): map[string]string{
		"auth": base64.StdEncoding.EncodeToString([]byte(authReg.user + ":" + authReg.pass)),
	}}})
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: kdaemon.ConfigNamespace, Name: "robot-pull"},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: cfg},
	}
	framework.Create(t, env.Client, secret)
	t.Run("with the secret the pull succeeds", func(t *testing.T) {
		image, tag := splitRef(images.private)
		setTag(t, image, appsv1alpha1.ImageTagSpec{Tag: tag, Version: 1, PullPolicy: policy(3)}, appsv1alpha1.ReferenceObject{Namespace: kdaemon.ConfigNamespace, Name: "robot-pull"})
		st := waitTag(t, image, tag)
		if st.Phase != appsv1alpha1.ImagePhaseSucceeded {
			t.Errorf("tag status %+v, want Succeeded", st)
		}
		if !inContainerd(t, images.private) {
			t.Errorf("containerd does not list %s", images.private)
		}
	})
	t.Run("without it the tag fails with the registry's refusal in the message", func(t *testing.T) {
		image, tag := splitRef(images.privateNoSecret)
		setTag(t, image, appsv1alpha1.ImageTagSpec{Tag: tag, Version: 1, PullPolicy: policy(0)})
		st := waitTag(t, image, tag)
		if st.Phase != appsv1alpha1.ImagePhaseFailed || !strings.Contains(st.Message, "401 Unauthorized") {
			t.Errorf("tag status %+v, want Failed with the 401 in the message", st)
		}
		if inContainerd(t, images.privateNoSecret) {
			t.Errorf("containerd lists %s although it was pulled without credentials", images.privateNoSecret)
		}
	})
}

func TestPullMissingTagFailsAfterBackoffLimit(t *testing.T) {
	image, _ := splitRef(images.sleeper)
	setTag(t, image, appsv1alpha1.ImageTagSpec{Tag: "missing", Version: 1, PullPolicy: policy(2)})
	st := waitTag(t, image, "missing")
	if st.Phase != appsv1alpha1.ImagePhaseFailed {
		t.Fatalf("tag status %+v, want Failed", st)
	}
	for _, want := range []string{"failed after 3 attempts", "not found"} {
		if !strings.Contains(st.Message, want) {
			t.Errorf("message %q lacks %q", st.Message, want)
		}
	}
	if n := plainReg.manifestRequests("sleeper:missing"); n < 3 {
		t.Errorf("the registry saw %d manifest requests for the missing tag, want one per attempt (3) at least", n)
	}
	// The daemon goes on serving: a later tag still gets pulled.
	_, okTag := splitRef(images.sleeper)
	setTag(t, image, appsv1alpha1.ImageTagSpec{Tag: okTag, Version: 2, PullPolicy: policy(3), ImagePullPolicy: appsv1alpha1.PullAlways})
	framework.Eventually(t, pullTimeout, "the re-versioned tag is pulled again", func(ctx context.Context) error {
		ni := &appsv1alpha1.NodeImage{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: realNode}, ni); err != nil {
			return err
		}
		for _, s := range ni.Status.ImageStatuses[image].Tags {
			if s.Tag == okTag && s.Version == 2 && s.Phase == appsv1alpha1.ImagePhaseSucceeded {
				return nil
			}
		}
		return fmt.Errorf("status %+v", ni.Status.ImageStatuses[image])
	})
}

func TestPullTimeoutFailsTheTag(t *testing.T) {
	image := plainReg.host() + "/slow/app"
	tag := appsv1alpha1.ImageTagSpec{Tag: "v1", Version: 1, PullPolicy: policy(0)}
	tag.PullPolicy.TimeoutSeconds = ptr.To[int32](1)
	setTag(t, image, tag)
	st := waitTag(t, image, "v1")
	// The registry holds the request for a minute; only the 1s timeout yields this message.
	if st.Phase != appsv1alpha1.ImagePhaseFailed || !strings.Contains(st.Message, "deadline exceeded") || st.CompletionTime == nil {
		t.Errorf("tag status %+v, want Failed with the deadline in the message and a completion time", st)
	}
}
