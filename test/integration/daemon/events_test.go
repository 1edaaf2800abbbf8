package daemon

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/random"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/daemon/imagepuller"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// eventOn names the object an event must be recorded on.
type eventOn struct {
	namespace, kind, name string
}

// TestPullLeavesEvents proves that a finished pull on the real containerd leaves 1.8's events,
// recorded by the daemon with the chart's rights: the source is the image puller on this node,
// and the message names the image and the node, with the time taken or the runtime's error.
func TestPullLeavesEvents(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pull-events-", nil)
	img, err := random.Image(1024, 1)
	if err != nil {
		t.Fatal(err)
	}
	present, err := plainReg.push(img, "events/present:v1")
	if err != nil {
		t.Fatal(err)
	}
	missing := plainReg.host() + "/events/missing:v1"
	job := &appsv1alpha1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prepull"}, Spec: appsv1alpha1.ImagePullJobSpec{Image: missing}}
	framework.Create(t, env.Client, job)
	asker := corev1.ObjectReference{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "ImagePullJob", Namespace: ns, Name: job.Name, UID: job.UID}

	type tcase struct {
		ref       string
		wantType  string
		reason    string
		wantOn    []eventOn
		wantMatch *regexp.Regexp
	}
	cases := map[string]tcase{
		"a pull of an image the registry has leaves PullImageSucceed on the NodeImage, with the time it took": {
			ref: present, wantType: corev1.EventTypeNormal, reason: imagepuller.ReasonPullSucceeded,
			wantOn:    []eventOn{{"default", "NodeImage", realNode}},
			wantMatch: regexp.MustCompile(regexp.QuoteMeta(present) + ` .*node ` + realNode + ` .*[0-9.]+(ms|s)$`),
		},
		"a pull of a tag the registry lacks leaves PullImageFailed on the NodeImage and on the ImagePullJob that asked, with the runtime's error": {
			ref: missing, wantType: corev1.EventTypeWarning, reason: imagepuller.ReasonPullFailed,
			wantOn:    []eventOn{{"default", "NodeImage", realNode}, {ns, "ImagePullJob", job.Name}},
			wantMatch: regexp.MustCompile(regexp.QuoteMeta(missing) + ` .*node ` + realNode + `: .*not found`),
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		image, tag := splitRef(tc.ref)
		setTag(t, image, appsv1alpha1.ImageTagSpec{Tag: tag, Version: 1, PullPolicy: policy(0), OwnerReferences: []corev1.ObjectReference{asker}})
		waitTag(t, image, tag)
		for _, on := range tc.wantOn {
			framework.WaitForEvent(t, env.Client, on.namespace, framework.Medium, tc.reason+" on "+on.kind+" "+on.name+" for "+tc.ref, func(e *corev1.Event) bool {
				return e.InvolvedObject.Kind == on.kind && e.InvolvedObject.Name == on.name && e.Reason == tc.reason && e.Type == tc.wantType &&
					e.Source.Component == imagepuller.EventSource && e.Source.Host == realNode &&
					strings.Contains(e.Message, tc.ref) && tc.wantMatch.MatchString(e.Message)
			})
		}
	})
}
