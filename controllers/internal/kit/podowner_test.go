package kit

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
)

func TestPodOwnerPass(t *testing.T) {
	tests := map[string]struct {
		pendingCreate  bool
		preDownloadErr error
		syncErr        error
		stale          bool
		wantSteps      []string
		wantResult     ctrl.Result
		wantErr        string
	}{
		"a pass runs every step in order and returns the sync's result": {
			wantSteps: []string{"read", "predownload", "sync", "status", "truncate"}, wantResult: ctrl.Result{RequeueAfter: time.Minute},
		},
		"a pass waits while the cache has not shown a pod it created": {
			pendingCreate: true, wantResult: ctrl.Result{RequeueAfter: CacheRequeue},
		},
		"a failed pre-download does not block the sync": {
			preDownloadErr: errors.New("no daemon"), wantSteps: []string{"read", "predownload", "sync", "status", "truncate"}, wantResult: ctrl.Result{RequeueAfter: time.Minute},
		},
		"a sync error is returned after the status is written, and the history is kept": {
			syncErr: errors.New("quota"), wantSteps: []string{"read", "predownload", "sync", "status"}, wantErr: "quota",
		},
		"a status write that lost looks again sooner than the sync asked": {
			stale: true, wantSteps: []string{"read", "predownload", "sync", "status", "truncate"}, wantResult: ctrl.Result{RequeueAfter: StaleRequeue},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			scale := expectations.NewScale(clk)
			if tt.pendingCreate {
				scale.Expect("ns/web", expectations.Create, "web-0")
			}
			var steps []string
			step := func(s string) { steps = append(steps, s) }
			p := PodOwnerPass[string, int]{Scale: scale, Updates: expectations.NewResourceVersion(clk),
				Read:        func(context.Context) (string, error) { step("read"); return "scope", nil },
				Pods:        func(string) []*corev1.Pod { return nil },
				PreDownload: func(context.Context, string) error { step("predownload"); return tt.preDownloadErr },
				Sync: func(context.Context, string) (ctrl.Result, int, error) {
					step("sync")
					return ctrl.Result{RequeueAfter: time.Minute}, 1, tt.syncErr
				},
				WriteStatus: func(_ context.Context, _ string, out int, syncErr error) (ctrl.Result, error) {
					step("status")
					if out != 1 || !errors.Is(syncErr, tt.syncErr) {
						t.Errorf("status got outcome %d and sync error %v, want the sync's", out, syncErr)
					}
					return After(tt.stale, StaleRequeue), nil
				},
				Truncate: func(context.Context, string) error { step("truncate"); return nil },
			}
			res, err := p.Run(context.Background(), "ns/web")
			if got := errString(err); got != tt.wantErr {
				t.Errorf("error = %q, want %q", got, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantSteps, steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if res != tt.wantResult {
				t.Errorf("result %+v, want %+v", res, tt.wantResult)
			}
		})
	}
}
