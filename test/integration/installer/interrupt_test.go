package installer

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	helmrelease "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// An install interrupted while Helm waits for a manager that never gets ready, cancelled as a
// signal does or run past its timeout, is uninstalled again: no release is left pending-install
// to block the next install, and the manager goes.
func TestInterruptedInstallLeavesNoPendingRelease(t *testing.T) {
	notReady := testkit.TempFile(t, "not-ready.yaml", "manager:\n  podAnnotations:\n    "+framework.AnnotationNotReady+": \"true\"\n")
	cases := map[string]struct {
		namespace string
		timeout   time.Duration
		// cancelWhenPending cancels the install's context once Helm has stored the release
		// pending-install.
		cancelWhenPending bool
		wantErr           string
	}{
		"an install cancelled while Helm waits": {
			namespace: "kruise-cancelled", timeout: installTimeout, cancelWhenPending: true, wantErr: "context canceled",
		},
		"an install past its timeout while Helm waits": {
			namespace: "kruise-timedout", timeout: failTimeout, wantErr: "did not finish within the timeout of " + failTimeout.String(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			i, _ := newInstaller(t)
			cfg := helmConfig(t, tc.namespace)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sawPending := make(chan bool, 1)
			if tc.cancelWhenPending {
				go func() {
					err := pollUntil(ctx, func(context.Context) bool {
						r, err := cfg.Releases.Last(installer.DefaultReleaseName)
						return err == nil && r.Info.Status == helmrelease.StatusPendingInstall
					})
					sawPending <- err == nil
					cancel()
				}()
			}
			t.Cleanup(func() {
				// Leave nothing to block the next test, even when this one fails.
				if _, err := cfg.Releases.Last(installer.DefaultReleaseName); err == nil {
					if _, err := i.Unlock(context.Background(), installer.Options{Namespace: tc.namespace}); err != nil {
						t.Errorf("unlock: %v", err)
					}
					uninstall(t, i, tc.namespace)
				}
			})
			_, err := i.Install(ctx, installer.Options{Namespace: tc.namespace, ValueFiles: []string{notReady}, Set: testSet(), Timeout: tc.timeout})
			t.Logf("install: %v", err)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error saying %q, got %v", tc.wantErr, err)
			}
			if tc.cancelWhenPending && !<-sawPending {
				t.Fatalf("the release was never seen pending-install, so the install was not cancelled while Helm waited")
			}
			switch r, err := cfg.Releases.Last(installer.DefaultReleaseName); {
			case err == nil:
				t.Errorf("want no release left, got revision %d %s", r.Version, r.Info.Status)
			case !errors.Is(err, driver.ErrReleaseNotFound):
				t.Errorf("read release: %v", err)
			}
			err = pollUntil(context.Background(), func(ctx context.Context) bool {
				_, err := env.Clientset.AppsV1().Deployments(tc.namespace).Get(ctx, "kruise-controller-manager", metav1.GetOptions{})
				return apierrors.IsNotFound(err)
			})
			if err != nil {
				t.Errorf("the manager Deployment of the interrupted install is still there: %v", err)
			}
			// The daemon's config namespace is cluster-wide: the next install needs it gone.
			const configNamespace = "kruise-daemon-config"
			if err := pollUntil(context.Background(), func(context.Context) bool { return !namespaceExists(t, configNamespace) }); err != nil {
				t.Errorf("namespace %s of the interrupted install is still there: %v", configNamespace, err)
			}
		})
	}
}
