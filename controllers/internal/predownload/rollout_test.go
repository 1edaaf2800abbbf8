package predownload

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestSyncRollout(t *testing.T) {
	data := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"a"}]}}}}`)
	current := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-old"}}
	current.Data.Raw = data
	type tcase struct {
		update    *appsv1.ControllerRevision
		wantBuilt bool
		// wantLabels are the update revision's labels afterwards.
		wantLabels map[string]string
	}
	tests := map[string]tcase{
		"revisions that agree build no workload": {
			update: current.DeepCopy(),
		},
		"an update revision that carries its decision builds no workload": {
			update:     rev(map[string]string{appsv1alpha1.ImagePreDownloadIgnoredKey: "true"}),
			wantLabels: map[string]string{appsv1.ControllerRevisionHashLabelKey: "abc", appsv1alpha1.ImagePreDownloadIgnoredKey: "true"},
		},
		"an update revision without a decision gets one": {
			update:     rev(nil),
			wantBuilt:  true,
			wantLabels: map[string]string{appsv1.ControllerRevisionHashLabelKey: "abc", appsv1alpha1.ImagePreDownloadIgnoredKey: "true"},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		s := runtime.NewScheme()
		for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, appsv1alpha1.AddToScheme} {
			if err := add(s); err != nil {
				t.Fatal(err)
			}
		}
		tc.update.Data.Raw = data
		c := fake.NewClientBuilder().WithScheme(s).WithObjects(tc.update.DeepCopy()).Build()
		built := false
		// A workload of MinReplicas never pre-downloads: the decision is Ignore.
		build := func() Workload {
			built = true
			return workload(func(w *Workload) { w.Replicas = MinReplicas })
		}
		decide := func(string) (inplaceupdate.Decision, error) {
			return inplaceupdate.Decision{Route: inplaceupdate.RouteInPlace}, nil
		}
		r := Rollout{Owner: workload(nil).Owner, Current: current, Update: tc.update, Decide: decide}
		if err := (Syncer{Client: c}).SyncRollout(context.Background(), r, build); err != nil {
			t.Fatal(err)
		}
		var got appsv1.ControllerRevision
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(tc.update), &got); err != nil {
			t.Fatal(err)
		}
		testkit.Diff(t, "built, update revision's labels", []any{tc.wantBuilt, tc.wantLabels}, []any{built, got.Labels})
	})
}
