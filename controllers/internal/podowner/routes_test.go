package podowner

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestBaseRoutes(t *testing.T) {
	parent := &metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"}
	// rev is revision n of a template running image.
	rev := func(n int64, image string) *appsv1.ControllerRevision {
		tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: image}}}}
		data, err := revision.TemplatePatch(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		r := revision.New(parent, appsv1alpha1.GroupVersion.WithKind("CloneSet"), map[string]string{}, data, n, nil)
		r.Name = revision.Name("web", image)
		return r
	}
	old, update := rev(1, "web:1"), rev(2, "web:2")
	revs := revision.Tracked{Revisions: revision.Revisions{History: []*appsv1.ControllerRevision{old, update}, Update: update, Current: old}}
	type tcase struct {
		policy    inplaceupdate.Policy
		from      string
		wantRoute inplaceupdate.Route
		wantGrace int32
	}
	tests := map[string]tcase{
		"pods of a revision whose change goes in place update in place, with the strategy's grace": {
			policy: inplaceupdate.PolicyInPlaceIfPossible, from: old.Name, wantRoute: inplaceupdate.RouteInPlace, wantGrace: 7,
		},
		"pods of a revision no longer in history are recreated": {
			policy: inplaceupdate.PolicyInPlaceIfPossible, from: "web-gone", wantRoute: inplaceupdate.RouteRecreate,
		},
		"pods of a revision no longer in history are stuck under InPlaceOnly": {
			policy: inplaceupdate.PolicyInPlaceOnly, from: "web-gone", wantRoute: inplaceupdate.RouteStuck,
		},
		"pods under a recreate policy are recreated": {
			policy: inplaceupdate.PolicyRecreate, from: old.Name, wantRoute: inplaceupdate.RouteRecreate,
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		b := &Base{Gates: features.NewGate()}
		routes := b.Routes(tc.policy, revs, &appspub.InPlaceUpdateStrategy{GracePeriodSeconds: 7})
		d, err := routes.For(tc.from)
		if err != nil {
			t.Fatal(err)
		}
		var grace int32
		if d.Plan != nil {
			grace = d.Plan.GraceSeconds
		}
		testkit.Diff(t, "route, grace seconds", []any{tc.wantRoute, tc.wantGrace}, []any{d.Route, grace})
	})
}
