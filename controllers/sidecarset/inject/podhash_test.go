package inject

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

func TestPodHashReadsEveryFormOfTheAnnotation(t *testing.T) {
	key := appsv1alpha1.SidecarSetHashAnnotation
	pod := func(raw string) metav1.Object {
		return &metav1.ObjectMeta{Annotations: map[string]string{key: raw}}
	}
	cases := map[string]struct {
		raw, name, want string
	}{
		"an upgrade spec map gives the SidecarSet's hash": {
			raw: `{"mesh":{"hash":"h1","sidecarSetName":"mesh","sidecarList":["envoy"]},"log":{"hash":"h2","sidecarSetName":"log"}}`, name: "log", want: "h2"},
		"the same value read again gives the same hash": {
			raw: `{"mesh":{"hash":"h1","sidecarSetName":"mesh","sidecarList":["envoy"]},"log":{"hash":"h2","sidecarSetName":"log"}}`, name: "mesh", want: "h1"},
		"a pod updated to a new hash gives the new one": {
			raw: `{"mesh":{"hash":"h9","sidecarSetName":"mesh","sidecarList":["envoy"]},"log":{"hash":"h2","sidecarSetName":"log"}}`, name: "mesh", want: "h9"},
		"an old release's name-to-hash map is read":          {raw: `{"mesh":"old"}`, name: "mesh", want: "old"},
		"a SidecarSet the pod does not record gives nothing": {raw: `{"mesh":"old"}`, name: "log", want: ""},
		"an unreadable annotation gives nothing":             {raw: `not json`, name: "mesh", want: ""},
		"no annotation gives nothing":                        {raw: "", name: "mesh", want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := PodHash(pod(tc.raw), tc.name, key); got != tc.want {
				t.Errorf("PodHash = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPodHashRemembersABoundedNumberOfValues(t *testing.T) {
	c := &hashMemo{m: map[string]map[string]string{}}
	for i := range podHashesMax + 10 {
		raw := fmt.Sprintf(`{"mesh":"h%d"}`, i)
		if got := c.hash(raw, "mesh"); got != fmt.Sprintf("h%d", i) {
			t.Fatalf("hash of value %d = %q", i, got)
		}
		if _, ok := c.m[raw]; !ok {
			t.Fatalf("value %d was not remembered", i)
		}
	}
	if len(c.m) > podHashesMax {
		t.Errorf("the memo holds %d values, more than %d", len(c.m), podHashesMax)
	}
}
