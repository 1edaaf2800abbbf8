package imagepuller

import (
	"errors"
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// TestRecordPullPicksTheObjects proves which objects a finished pull's events land on, as in
// 1.8: a success on the NodeImage alone, a failure also on every ImagePullJob that asked.
func TestRecordPullPicksTheObjects(t *testing.T) {
	job := func(name string) corev1.ObjectReference {
		return corev1.ObjectReference{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "ImagePullJob", Namespace: "ns", Name: name}
	}
	type tcase struct {
		err  error
		want []string
	}
	cases := map[string]tcase{
		"a pull that succeeded leaves a Normal event on the NodeImage only": {
			want: []string{"Normal PullImageSucceed NodeImage"},
		},
		"a pull that failed leaves a Warning on each ImagePullJob that asked and on the NodeImage": {
			err:  errors.New("not found"),
			want: []string{"Warning PullImageFailed ImagePullJob", "Warning PullImageFailed ImagePullJob", "Warning PullImageFailed NodeImage"},
		},
	}
	shape := regexp.MustCompile(`^(\w+ \w+) .* involvedObject\{kind=(\w+),`)
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		rec := record.NewFakeRecorder(10)
		rec.IncludeObject = true
		p := New(nil, nil, nil, Options{NodeName: "n1", Recorder: rec})
		p.recordPull("registry.example.com/web:v1", &task{spec: appsv1alpha1.ImageTagSpec{OwnerReferences: []corev1.ObjectReference{job("a"), job("b")}}}, time.Second, tc.err)
		close(rec.Events)
		var got []string
		for e := range rec.Events {
			m := shape.FindStringSubmatch(e)
			if m == nil {
				t.Fatalf("event %q has no involved object", e)
			}
			got = append(got, m[1]+" "+m[2])
		}
		testkit.Diff(t, "events", tc.want, got)
	})
}
