package installer

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestLockFree(t *testing.T) {
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	lease := func(holder string, renewed time.Time) *coordinationv1.Lease {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			annotationLockRelease: "ca/kruise-addon", annotationLockCommand: "install",
		}}}
		if holder != "" {
			l.Spec.HolderIdentity = ptr.To(holder)
			l.Spec.RenewTime = &metav1.MicroTime{Time: renewed}
			l.Spec.LeaseDurationSeconds = ptr.To(int32(15))
		}
		return l
	}
	cases := map[string]struct {
		lease      *coordinationv1.Lease
		wantFree   bool
		wantHolder LockHolder
	}{
		"no Lease is a free lock": {wantFree: true},
		"a Lease nobody holds is free": {
			lease: lease("", time.Time{}), wantFree: true,
		},
		"a Lease another installer renewed within its duration refuses, naming the release and command": {
			lease: lease("host/pid-1/ab", now.Add(-10*time.Second)),
			wantHolder: LockHolder{Identity: "host/pid-1/ab", Namespace: "ca", Release: "kruise-addon", Command: "install",
				Renewed: now.Add(-10 * time.Second), Duration: 15 * time.Second},
		},
		"a Lease not renewed for its whole duration is taken over (a crashed installer)": {
			lease: lease("host/pid-1/ab", now.Add(-15*time.Second)), wantFree: true,
			wantHolder: LockHolder{Identity: "host/pid-1/ab", Namespace: "ca", Release: "kruise-addon", Command: "install",
				Renewed: now.Add(-15 * time.Second), Duration: 15 * time.Second},
		},
		"a Lease this installer holds is its own": {
			lease: lease("me", now), wantFree: true,
			wantHolder: LockHolder{Identity: "me", Namespace: "ca", Release: "kruise-addon", Command: "install", Renewed: now, Duration: 15 * time.Second},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h, free := lockFree(tc.lease, "me", now)
			if diff := cmp.Diff(tc.wantFree, free); diff != "" {
				t.Errorf("free (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantHolder, h); diff != "" {
				t.Errorf("holder (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLockedReason(t *testing.T) {
	h := LockHolder{Identity: "host/pid-1/ab", Namespace: "ca", Release: "kruise-addon", Command: "install",
		Renewed: time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC), Duration: 15 * time.Second}
	cases := map[string]struct {
		o    Options
		want string
	}{
		"another release is refused, told the add-on runs once per cluster": {
			o: Options{Namespace: "cb", ReleaseName: "kruise-addon"},
			want: "install of release ca/kruise-addon by installer host/pid-1/ab is in progress: it holds the cluster's lock (Lease kube-system/kruise-addon-lock) until 2026-12-05T10:00:15Z unless it renews it; " +
				"the add-on runs once per cluster, so release cb/kruise-addon is refused; run the command again once it has ended",
		},
		"the same release is told only that a command is in progress": {
			o: Options{Namespace: "ca", ReleaseName: "kruise-addon"},
			want: "install of release ca/kruise-addon by installer host/pid-1/ab is in progress: it holds the cluster's lock (Lease kube-system/kruise-addon-lock) until 2026-12-05T10:00:15Z unless it renews it; " +
				"run the command again once it has ended",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, lockedReason(h, tc.o)); diff != "" {
				t.Errorf("reason (-want +got):\n%s", diff)
			}
		})
	}
}
