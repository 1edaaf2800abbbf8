package podowner

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podwrite"
	"github.com/kruise-addon/kruise-addon/controllers/internal/pubcheck"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestRun(t *testing.T) {
	type tcase struct {
		gatesOn        bool
		hasPreDownload bool
		want           []string
	}
	tests := map[string]tcase{
		"the pre-download runs before the sync while its gates are on": {gatesOn: true, hasPreDownload: true, want: []string{"read", "preDownload", "sync", "status", "truncate"}},
		"the pre-download does not run while its gates are off":        {hasPreDownload: true, want: []string{"read", "sync", "status", "truncate"}},
		"a kind without a pre-download runs the rest of the pass":      {gatesOn: true, want: []string{"read", "sync", "status", "truncate"}},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		g := features.NewGate()
		if err := g.Set(fmt.Sprintf("%s=%t,%s=%t", features.KruiseDaemon, tc.gatesOn, features.PreDownloadImageForInPlaceUpdate, tc.gatesOn)); err != nil {
			t.Fatal(err)
		}
		b := New(nil, nil, nil, setup.Deps{Clock: clocktesting.NewFakeClock(metav1.Now().Time), Gates: g}, nil)
		var got []string
		step := func(name string) { got = append(got, name) }
		var preDownload func(context.Context, int) error
		if tc.hasPreDownload {
			preDownload = func(context.Context, int) error { step("preDownload"); return nil }
		}
		owner := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}}
		_, err := Run(context.Background(), &b, owner, kit.PodOwnerPass[int, struct{}]{
			Read: func(context.Context) (int, error) { step("read"); return 0, nil },
			Pods: func(int) []*corev1.Pod { return nil },
			Sync: func(context.Context, int) (ctrl.Result, struct{}, error) {
				step("sync")
				return ctrl.Result{}, struct{}{}, nil
			},
			WriteStatus: func(context.Context, int, struct{}, error) (ctrl.Result, error) {
				step("status")
				return ctrl.Result{}, nil
			},
			Truncate: func(context.Context, int) error { step("truncate"); return nil },
		}, preDownload)
		if err != nil {
			t.Fatal(err)
		}
		testkit.Diff(t, "steps of the pass", tc.want, got)
	})
}

func TestWriter(t *testing.T) {
	type tcase struct {
		budget     *pubcheck.Checker
		wantBudget bool
	}
	tests := map[string]tcase{
		"a Base that checks budgets hands its checker to the writer": {budget: &pubcheck.Checker{}, wantBudget: true},
		"a Base that does not check budgets gives the writer none":   {},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		b := Base{Budget: tc.budget}
		owner := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}}
		w := b.Writer(owner, nil, podwrite.Messages{})
		testkit.Diff(t, "writer has a budget", tc.wantBudget, w.Budget != nil)
		testkit.Diff(t, "writer's owner", client.Object(owner), w.Owner)
	})
}

func TestTruncateHistory(t *testing.T) {
	type tcase struct {
		kept    []string
		podRevs []string
		want    []string
	}
	tests := map[string]tcase{
		"with a limit of none only the kept revisions and those pods are at stay": {kept: []string{"r4"}, podRevs: []string{"r2"}, want: []string{"r2", "r4"}},
		"a pod at a revision no longer in history keeps nothing else":             {kept: []string{"r4"}, podRevs: []string{"gone"}, want: []string{"r4"}},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		var history []*appsv1.ControllerRevision
		var objs []client.Object
		for i, name := range []string{"r1", "r2", "r3", "r4"} {
			rev := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Revision: int64(i + 1)}
			history, objs = append(history, rev), append(objs, rev.DeepCopy())
		}
		c := fake.NewClientBuilder().WithObjects(objs...).Build()
		b := Base{History: revision.History{Client: c}}
		var pods []*corev1.Pod
		for _, rev := range tc.podRevs {
			pods = append(pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{appsv1.ControllerRevisionHashLabelKey: rev}}})
		}
		revisionOf := func(p *corev1.Pod) string { return p.Labels[appsv1.ControllerRevisionHashLabelKey] }
		if err := b.TruncateHistory(context.Background(), history, ptr.To[int32](0), tc.kept, pods, revisionOf); err != nil {
			t.Fatal(err)
		}
		var left appsv1.ControllerRevisionList
		if err := c.List(context.Background(), &left); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range left.Items {
			got = append(got, r.Name)
		}
		testkit.Diff(t, "revisions left", tc.want, got)
	})
}

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
