package server

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func TestATokenReviewThatCannotBeMadeIs503NeverAnAccept(t *testing.T) {
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "https://127.0.0.1:1", TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, defaultAccess(), nil, func(o *Options) {
		o.TokenReview = &TokenReviewOptions{Client: cs.AuthenticationV1().TokenReviews(), Groups: map[string]Role{"system:authenticated": Operator}}
	})
	cases := []struct {
		name, token    string
		wantStatus     int
		wantRetryAfter string
	}{
		{"a token the file does not know is 503 with Retry-After", "a-token-only-the-cluster-could-know", http.StatusServiceUnavailable, retryAfterUnavailable},
		{"a token of the file needs no review", readerToken, http.StatusOK, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("GET", f.ts.URL+"/v1/clusters", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp := f.send(t, req, tc.token)
			if resp.StatusCode != tc.wantStatus || resp.Header.Get("Retry-After") != tc.wantRetryAfter {
				t.Errorf("status %d Retry-After %q, want %d %q", resp.StatusCode, resp.Header.Get("Retry-After"), tc.wantStatus, tc.wantRetryAfter)
			}
		})
	}
}

func TestParseGroupRoles(t *testing.T) {
	cases := []struct {
		name      string
		pairs     []string
		want      map[string]Role
		wantError bool
	}{
		{"pairs map groups to roles", []string{"system:serviceaccounts:console=operator", "viewers=read-only"},
			map[string]Role{"system:serviceaccounts:console": Operator, "viewers": ReadOnly}, false},
		{"a pair without = is refused", []string{"viewers"}, nil, true},
		{"an unknown role is refused", []string{"viewers=admin"}, nil, true},
		{"a group given twice is refused", []string{"viewers=read-only", "viewers=operator"}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseGroupRoles(field.NewPath("--token-review-group"), tc.pairs)
			if (err != nil) != tc.wantError {
				t.Fatalf("error %v, want one: %t", err, tc.wantError)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("roles (-want +got):\n%s", diff)
			}
		})
	}
}
