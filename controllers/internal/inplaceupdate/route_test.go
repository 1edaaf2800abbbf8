package inplaceupdate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

func TestDecideRoute(t *testing.T) {
	imageChange := template(func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "web:2" })
	commandChange := template(func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Command = []string{"sh"} })
	tests := map[string]struct {
		policy Policy
		from   *appsv1.ControllerRevision
		next   *corev1.PodTemplateSpec
		opts   Options
		want   Decision
	}{
		"Recreate recreates even a change that could go in place": {
			policy: PolicyRecreate, from: rev("v1", template()), next: imageChange,
			want: Decision{Route: RouteRecreate},
		},
		"InPlaceIfPossible updates an image change in place": {
			policy: PolicyInPlaceIfPossible, from: rev("v1", template()), next: imageChange, opts: Options{GraceSeconds: 3},
			want: Decision{Route: RouteInPlace, Plan: &Plan{Revision: "v2", ContainerImages: map[string]string{"main": "web:2"}, GraceSeconds: 3}},
		},
		"InPlaceIfPossible recreates a change that cannot go in place": {
			policy: PolicyInPlaceIfPossible, from: rev("v1", template()), next: commandChange,
			want: Decision{Route: RouteRecreate},
		},
		"InPlaceOnly updates an image change in place": {
			policy: PolicyInPlaceOnly, from: rev("v1", template()), next: imageChange,
			want: Decision{Route: RouteInPlace, Plan: &Plan{Revision: "v2", ContainerImages: map[string]string{"main": "web:2"}}},
		},
		"InPlaceOnly leaves a change that cannot go in place stuck": {
			policy: PolicyInPlaceOnly, from: rev("v1", template()), next: commandChange,
			want: Decision{Route: RouteStuck},
		},
		"InPlaceIfPossible recreates pods of a revision no longer in history": {
			policy: PolicyInPlaceIfPossible, next: imageChange,
			want: Decision{Route: RouteRecreate},
		},
		"InPlaceOnly leaves pods of a revision no longer in history stuck": {
			policy: PolicyInPlaceOnly, next: imageChange,
			want: Decision{Route: RouteStuck},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := DecideRoute(tc.policy, tc.from, rev("v2", tc.next), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideRouteNamesTheRevisionsItCannotCompare(t *testing.T) {
	bad := rev("v1", template())
	bad.Data.Raw = []byte("not json")
	_, err := DecideRoute(PolicyInPlaceIfPossible, bad, rev("v2", template()), Options{})
	if err == nil {
		t.Fatal("DecideRoute() of an undecodable revision returned no error")
	}
	if want := "compare revision v1 with v2: "; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Fatalf("error = %q, want it to start with %q", err, want)
	}
}
