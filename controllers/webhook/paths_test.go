package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPathForms(t *testing.T) {
	cases := map[string]struct {
		canonical string
		want      []string
	}{
		"a versioned path is served unversioned too": {
			canonical: "/mutate-apps-kruise-io-v1alpha1-cloneset",
			want:      []string{"/mutate-apps-kruise-io-v1alpha1-cloneset", "/mutate-apps-kruise-io-cloneset"},
		},
		"a validating v1beta1 path drops its version": {
			canonical: "/validate-apps-kruise-io-v1beta1-statefulset",
			want:      []string{"/validate-apps-kruise-io-v1beta1-statefulset", "/validate-apps-kruise-io-statefulset"},
		},
		"StatefulSet's unversioned path is served under both versions": {
			canonical: "/mutate-apps-kruise-io-statefulset",
			want: []string{"/mutate-apps-kruise-io-statefulset", "/mutate-apps-kruise-io-v1beta1-statefulset",
				"/mutate-apps-kruise-io-v1alpha1-statefulset"},
		},
		"PodUnavailableBudget's unversioned path in the policy group": {
			canonical: "/validate-policy-kruise-io-podunavailablebudget",
			want: []string{"/validate-policy-kruise-io-podunavailablebudget",
				"/validate-policy-kruise-io-v1alpha1-podunavailablebudget"},
		},
		"an unversioned path of a kind 1.8 versions has no other form": {
			canonical: "/mutate-apps-kruise-io-cloneset",
			want:      []string{"/mutate-apps-kruise-io-cloneset"},
		},
		"the pod path has no other form":     {canonical: "/mutate-pod", want: []string{"/mutate-pod"}},
		"the convert path has no other form": {canonical: "/convert", want: []string{"/convert"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, PathForms(tc.canonical)); diff != "" {
				t.Errorf("PathForms(%q) (-want +got):\n%s", tc.canonical, diff)
			}
		})
	}
}
