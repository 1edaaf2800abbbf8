package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kruise-addon/kruise-addon/installer/server"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// serviceAccountToken creates a ServiceAccount in a new namespace and a token for it through
// the TokenRequest API; it returns the namespace and the token.
func serviceAccountToken(t *testing.T, prefix string) (string, string) {
	t.Helper()
	ns := framework.NewNamespace(t, env.Client, prefix, nil)
	framework.Create(t, env.Client, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "console", Namespace: ns}})
	tr, err := env.Clientset.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), "console",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of ServiceAccount %s/console: %v", ns, err)
	}
	return ns, tr.Status.Token
}

func TestTokenReviewAuthenticatesServiceAccountsWithARoleFromTheirGroup(t *testing.T) {
	operatorNS, operatorSAToken := serviceAccountToken(t, "tr-console-")
	viewerNS, viewerSAToken := serviceAccountToken(t, "tr-viewer-")
	_, otherSAToken := serviceAccountToken(t, "tr-other-")
	const cacheTTL = time.Minute
	clk := clocktesting.NewFakeClock(time.Now())
	c, audit := startServer(t, func(o *server.Options) {
		o.Now = clk.Now
		o.TokenReview = &server.TokenReviewOptions{Client: env.Clientset.AuthenticationV1().TokenReviews(), CacheTTL: cacheTTL,
			Groups: map[string]server.Role{"system:serviceaccounts:" + operatorNS: server.Operator, "system:serviceaccounts:" + viewerNS: server.ReadOnly}}
	})
	// A rollback to revision -1 is bad input (400) for a caller who may roll back, 403 for one
	// who may not, 401 for no caller: the answer tells the role without changing the cluster.
	cases := []struct {
		name              string
		token             string
		wantRead, wantPut int
	}{
		{"a ServiceAccount in an operator group reads and mutates", operatorSAToken, http.StatusOK, http.StatusBadRequest},
		{"a ServiceAccount in a read-only group reads only", viewerSAToken, http.StatusOK, http.StatusForbidden},
		{"a ServiceAccount in no configured group is no caller", otherSAToken, http.StatusUnauthorized, http.StatusUnauthorized},
		{"a token the cluster does not accept is no caller", "not-a-token-of-anyone-0123456789", http.StatusUnauthorized, http.StatusUnauthorized},
		{"a token of the tokens file still needs no review", operatorToken, http.StatusOK, http.StatusBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if status, body := c.do(t, "GET", "/v1/clusters", tc.token, nil); status != tc.wantRead {
				t.Errorf("GET /v1/clusters: status %d, want %d: %s", status, tc.wantRead, body)
			}
			if status, body := c.do(t, "POST", "/v1/clusters/test/addon/rollback", tc.token, map[string]any{"toRevision": -1}); status != tc.wantPut {
				t.Errorf("POST rollback: status %d, want %d: %s", status, tc.wantPut, body)
			}
		})
	}

	t.Run("the audit log names the reviewed user", func(t *testing.T) {
		want := fmt.Sprintf(`"who":"system:serviceaccount:%s:console","role":"operator","via":"tokenreview"`, operatorNS)
		if !strings.Contains(audit.String(), want) {
			t.Errorf("no audit line with %s:\n%s", want, audit.String())
		}
	})

	t.Run("a review is reused for the cache's time, then made again", func(t *testing.T) {
		if err := env.Clientset.CoreV1().ServiceAccounts(operatorNS).Delete(context.Background(), "console", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(t, framework.Short, "the apiserver refuses the deleted ServiceAccount's token", func(ctx context.Context) error {
			r, err := env.Clientset.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: operatorSAToken}}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			if r.Status.Authenticated {
				return fmt.Errorf("still authenticated as %s", r.Status.User.Username)
			}
			return nil
		})
		if status, body := c.do(t, "GET", "/v1/clusters", operatorSAToken, nil); status != http.StatusOK {
			t.Errorf("within the cache's time: status %d, want the cached 200: %s", status, body)
		}
		clk.Step(cacheTTL + time.Second)
		status, body := c.do(t, "GET", "/v1/clusters", operatorSAToken, nil)
		var e server.ErrorBody
		_ = json.Unmarshal(body, &e)
		if status != http.StatusUnauthorized || e.Reason != server.ReasonUnauthorized {
			t.Errorf("after the cache's time: status %d, want 401 Unauthorized: %s", status, body)
		}
	})
}
