package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-addon/kruise-addon/installer/server"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// Two installs through the API into two namespaces of one cluster, posted at once, in both
// orders: they are two operations (each release has its own), and the cluster's lock lets one
// of them install; the other fails Refused (exit 3) naming the winner's release, with nothing
// installed in its namespace.
func TestTwoInstallsThroughTheAPIEndWithOneRelease(t *testing.T) {
	c, _ := startServer(t)
	for n := range 2 {
		a, b := fmt.Sprintf("api-race-%d-a", n), fmt.Sprintf("api-race-%d-b", n)
		order := []string{a, b}
		if n%2 == 1 {
			order = []string{b, a}
		}
		t.Run(fmt.Sprintf("%s posted first", order[0]), func(t *testing.T) {
			ids := map[string]string{}
			for _, ns := range order {
				ids[ns] = c.start(t, "install", "test", map[string]any{"namespace": ns, "values": testValues(nil), "timeout": installTimeout.String()})
			}
			done := map[string]server.Event{}
			for _, ns := range order {
				events := c.events(t, ids[ns])
				done[ns] = events[len(events)-1]
			}
			winner, loser := "", ""
			for _, ns := range order {
				if done[ns].State == server.StateSucceeded {
					winner = ns
				} else {
					loser = ns
				}
			}
			if winner == "" || loser == "" {
				t.Fatalf("want exactly one install to succeed: %s: %+v; %s: %+v", a, done[a], b, done[b])
			}
			t.Cleanup(func() {
				c.run(t, "uninstall", "test", map[string]any{"namespace": winner})
				framework.Eventually(t, framework.Long, "the daemon config namespace goes with the release", func(ctx context.Context) error {
					_, err := env.Clientset.CoreV1().Namespaces().Get(ctx, "kruise-daemon-config", metav1.GetOptions{})
					return framework.Want(apierrors.IsNotFound(err), fmt.Sprintf("still there: %v", err))
				})
			})
			e := done[loser].Error
			if e == nil || e.Reason != server.ReasonRefused || e.ExitCode != 3 || e.Refused == nil || e.Refused.InUse == nil {
				t.Fatalf("the loser's done event %+v, want Refused, exit 3, naming the other release", done[loser])
			}
			if diff := cmp.Diff([]string{winner, "kruise-addon"}, []string{e.Refused.InUse.Namespace, e.Refused.InUse.Release}); diff != "" {
				t.Errorf("the release the refusal names (-want +got):\n%s", diff)
			}
			if st := c.addon(t, "test", winner).Status.State; st != "deployed" {
				t.Errorf("the winner is %s, want deployed", st)
			}
			if st := c.addon(t, "test", loser).Status.State; st != "absent" {
				t.Errorf("the loser is %s, want absent", st)
			}
			if _, err := env.Clientset.CoreV1().Namespaces().Get(context.Background(), loser, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("namespace %s of the refused install: %v, want none", loser, err)
			}
		})
	}
}
