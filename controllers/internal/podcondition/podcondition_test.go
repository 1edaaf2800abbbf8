package podcondition

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/testclient"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

var (
	earlier = metav1.NewTime(time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC))
	now     = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
)

const ready = appspub.KruisePodReadyConditionType

func cond(t corev1.PodConditionType, status corev1.ConditionStatus, at metav1.Time, reason, msg string) corev1.PodCondition {
	return corev1.PodCondition{Type: t, Status: status, LastTransitionTime: at, Reason: reason, Message: msg}
}

func TestGet(t *testing.T) {
	pod := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
		cond(corev1.PodReady, corev1.ConditionTrue, earlier, "", ""),
		cond(ready, corev1.ConditionFalse, earlier, "", ""),
	}}}
	type tcase struct {
		t    corev1.PodConditionType
		want *corev1.PodCondition
	}
	tests := map[string]tcase{
		"a condition the pod has is returned": {t: ready, want: &pod.Status.Conditions[1]},
		"a condition the pod lacks is nil":    {t: appspub.InPlaceUpdateReady},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		if got := Get(pod, tc.t); got != tc.want {
			t.Fatalf("Get(%s) = %v, want %v", tc.t, got, tc.want)
		}
	})
}

func TestSet(t *testing.T) {
	kubelet := cond(corev1.PodReady, corev1.ConditionTrue, earlier, "", "")
	type tcase struct {
		have        []corev1.PodCondition
		set         corev1.PodCondition
		want        []corev1.PodCondition
		wantChanged bool
	}
	tests := map[string]tcase{
		"a new condition is added after the others": {
			have:        []corev1.PodCondition{kubelet},
			set:         cond(ready, corev1.ConditionTrue, now, "", ""),
			want:        []corev1.PodCondition{kubelet, cond(ready, corev1.ConditionTrue, now, "", "")},
			wantChanged: true,
		},
		"a status change replaces the condition, with the new transition time": {
			have:        []corev1.PodCondition{cond(ready, corev1.ConditionTrue, earlier, "", ""), kubelet},
			set:         cond(ready, corev1.ConditionFalse, now, "Held", ""),
			want:        []corev1.PodCondition{cond(ready, corev1.ConditionFalse, now, "Held", ""), kubelet},
			wantChanged: true,
		},
		"a new reason without a status change keeps the transition time": {
			have:        []corev1.PodCondition{cond(ready, corev1.ConditionFalse, earlier, "A", "")},
			set:         cond(ready, corev1.ConditionFalse, now, "B", "why"),
			want:        []corev1.PodCondition{cond(ready, corev1.ConditionFalse, earlier, "B", "why")},
			wantChanged: true,
		},
		"the same condition again changes nothing": {
			have: []corev1.PodCondition{cond(ready, corev1.ConditionFalse, earlier, "A", "m")},
			set:  cond(ready, corev1.ConditionFalse, now, "A", "m"),
			want: []corev1.PodCondition{cond(ready, corev1.ConditionFalse, earlier, "A", "m")},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		pod := &corev1.Pod{Status: corev1.PodStatus{Conditions: tc.have}}
		changed := Set(pod, tc.set)
		testkit.Diff(t, "changed, conditions", []any{tc.wantChanged, tc.want}, []any{changed, pod.Status.Conditions})
	})
}

func TestGates(t *testing.T) {
	type tcase struct {
		pod       *corev1.Pod
		wantHas   bool
		wantAdded bool
		wantGates []corev1.PodReadinessGate
	}
	tests := map[string]tcase{
		"a pod without the gate gets it added, after its other gates": {
			pod:       builder.Pod("p", "ns").ReadinessGate(appspub.InPlaceUpdateReady).Obj(),
			wantAdded: true,
			wantGates: []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}, {ConditionType: ready}},
		},
		"a pod with the gate has it and keeps one": {
			pod:       builder.Pod("p", "ns").ReadinessGate(ready).Obj(),
			wantHas:   true,
			wantGates: []corev1.PodReadinessGate{{ConditionType: ready}},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		has := HasGate(tc.pod, ready)
		added := AddGate(tc.pod, ready)
		testkit.Diff(t, "has, added, gates", []any{tc.wantHas, tc.wantAdded, tc.wantGates}, []any{has, added, tc.pod.Spec.ReadinessGates})
	})
}

func TestHoldAndRelease(t *testing.T) {
	crr := Holder{UserAgent: "ContainerRecreateRequest", Key: "ns/a"}
	lc := Holder{UserAgent: "Lifecycle", Key: "PreparingDelete"}
	const (
		crrMsg  = `[{"userAgent":"ContainerRecreateRequest","key":"ns/a"}]`
		lcMsg   = `[{"userAgent":"Lifecycle","key":"PreparingDelete"}]`
		bothMsg = `[{"userAgent":"Lifecycle","key":"PreparingDelete"},{"userAgent":"ContainerRecreateRequest","key":"ns/a"}]`
	)
	type tcase struct {
		have        []corev1.PodCondition
		holder      Holder
		hold        bool
		want        []corev1.PodCondition
		wantChanged bool
	}
	tests := map[string]tcase{
		"the first hold turns a True condition False and names its holder": {
			have: []corev1.PodCondition{cond(ready, corev1.ConditionTrue, earlier, "", "")},
			hold: true, holder: crr,
			want:        []corev1.PodCondition{cond(ready, corev1.ConditionFalse, now, "", crrMsg)},
			wantChanged: true,
		},
		"a hold on a pod without the condition adds it False": {
			hold: true, holder: lc,
			want:        []corev1.PodCondition{cond(ready, corev1.ConditionFalse, now, "", lcMsg)},
			wantChanged: true,
		},
		"a hold already there changes nothing": {
			have: []corev1.PodCondition{cond(ready, corev1.ConditionFalse, earlier, "", crrMsg)},
			hold: true, holder: crr,
			want: []corev1.PodCondition{cond(ready, corev1.ConditionFalse, earlier, "", crrMsg)},
		},
		"a second holder joins the first and the condition stays False since it was": {
			have: []corev1.PodCondition{cond(ready, corev1.ConditionFalse, earlier, "", lcMsg)},
			hold: true, holder: crr,
			want:        []corev1.PodCondition{cond(ready, corev1.ConditionFalse, earlier, "", bothMsg)},
			wantChanged: true,
		},
		"releasing the last hold turns the condition True": {
			have:   []corev1.PodCondition{cond(ready, corev1.ConditionFalse, earlier, "", crrMsg)},
			holder: crr,
			want:   []corev1.PodCondition{cond(ready, corev1.ConditionTrue, now, "", "")}, wantChanged: true,
		},
		"releasing one of two holds keeps the condition False": {
			have:   []corev1.PodCondition{cond(ready, corev1.ConditionFalse, earlier, "", bothMsg)},
			holder: crr,
			want:   []corev1.PodCondition{cond(ready, corev1.ConditionFalse, earlier, "", lcMsg)}, wantChanged: true,
		},
		"releasing a hold that is not there changes nothing, even a condition another holder keeps False": {
			have:   []corev1.PodCondition{cond(ready, corev1.ConditionFalse, earlier, "", lcMsg)},
			holder: crr,
			want:   []corev1.PodCondition{cond(ready, corev1.ConditionFalse, earlier, "", lcMsg)},
		},
		"a message that is not a list of holders counts as none": {
			have: []corev1.PodCondition{cond(ready, corev1.ConditionFalse, earlier, "", "written by hand")},
			hold: true, holder: crr,
			want:        []corev1.PodCondition{cond(ready, corev1.ConditionFalse, earlier, "", crrMsg)},
			wantChanged: true,
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		pod := &corev1.Pod{Status: corev1.PodStatus{Conditions: tc.have}}
		var changed bool
		if tc.hold {
			changed = Hold(pod, tc.holder, now)
		} else {
			changed = Release(pod, tc.holder, now)
		}
		testkit.Diff(t, "changed, conditions", []any{tc.wantChanged, tc.want}, []any{changed, pod.Status.Conditions})
	})
}

// TestPatch runs Patch against a fake apiserver in which, as in a cluster, the kubelet writes the
// pod's status between our read and our write.
func TestPatch(t *testing.T) {
	holder := Holder{UserAgent: "Lifecycle", Key: "PreparingUpdate"}
	type tcase struct {
		// kubeletWrites is how many of our writes the kubelet gets in before.
		kubeletWrites int
		change        func(*corev1.Pod) bool
		wantCalls     int
		wantWrites    int
		wantReady     corev1.ConditionStatus
		wantErr       bool
	}
	tests := map[string]tcase{
		"a change is written with one patch when nobody else writes": {
			change: func(p *corev1.Pod) bool { return Hold(p, holder, now) }, wantCalls: 1, wantWrites: 1, wantReady: corev1.ConditionFalse,
		},
		"a write that raced the kubelet is retried on the pod read again, keeping the kubelet's write": {
			kubeletWrites: 2,
			change:        func(p *corev1.Pod) bool { return Hold(p, holder, now) }, wantCalls: 3, wantWrites: 3, wantReady: corev1.ConditionFalse,
		},
		"no change writes nothing": {
			change: func(*corev1.Pod) bool { return false }, wantCalls: 1, wantReady: corev1.ConditionTrue,
		},
		"a kubelet that always wins makes Patch give up with the conflict": {
			kubeletWrites: 100,
			change:        func(p *corev1.Pod) bool { return Hold(p, holder, now) }, wantCalls: 4, wantWrites: 4, wantReady: corev1.ConditionTrue, wantErr: true,
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		pod := builder.Pod("p", "ns").ReadinessGate(ready).Condition(ready, corev1.ConditionTrue).Condition(corev1.PodReady, corev1.ConditionTrue).Obj()
		base := testclient.New(pod)
		writes, kubelet := 0, 0
		c := interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				writes++
				if kubelet < tc.kubeletWrites {
					kubelet++
					// The kubelet reports a container restart, which moves the resourceVersion on.
					p := &corev1.Pod{}
					if err := c.Get(ctx, client.ObjectKeyFromObject(obj), p); err != nil {
						return err
					}
					p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", RestartCount: int32(kubelet)}}
					if err := c.Status().Update(ctx, p); err != nil {
						return err
					}
				}
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		})
		calls := 0
		got, err := Patch(context.Background(), c, nil, pod, func(p *corev1.Pod) bool { calls++; return tc.change(p) })
		if (err != nil) != tc.wantErr {
			t.Fatalf("Patch error = %v, want error %v", err, tc.wantErr)
		}
		stored := &corev1.Pod{}
		if err := base.Get(context.Background(), client.ObjectKeyFromObject(pod), stored); err != nil {
			t.Fatal(err)
		}
		var restarts int32
		if len(stored.Status.ContainerStatuses) > 0 {
			restarts = stored.Status.ContainerStatuses[0].RestartCount
		}
		gotSummary := []any{calls, writes, Get(stored, ready).Status, int(restarts)}
		wantSummary := []any{tc.wantCalls, tc.wantWrites, tc.wantReady, kubelet}
		testkit.Diff(t, "calls, writes, KruisePodReady, kubelet restarts kept", wantSummary, gotSummary)
		if err == nil && got.ResourceVersion != stored.ResourceVersion {
			t.Fatalf("Patch returned the pod at resourceVersion %s, stored is %s", got.ResourceVersion, stored.ResourceVersion)
		}
	})
}

// TestPatchRetriesFromTheFreshReader: after a conflict Patch must read the pod from the apiserver,
// not from an informer cache that has not seen the write it lost to; otherwise each retry
// conflicts again, after a longer sleep, until Patch gives up.
func TestPatchRetriesFromTheFreshReader(t *testing.T) {
	holder := Holder{UserAgent: "Lifecycle", Key: "PreparingUpdate"}
	for name, tc := range map[string]struct {
		freshReader bool
		wantErr     bool
		wantWrites  int
	}{
		"with a fresh reader the retry after one conflict goes through": {freshReader: true, wantWrites: 2},
		"reading the stale cache again conflicts until Patch gives up":  {freshReader: false, wantErr: true, wantWrites: 4},
	} {
		t.Run(name, func(t *testing.T) {
			pod := builder.Pod("p", "ns").ReadinessGate(ready).Condition(ready, corev1.ConditionTrue).Obj()
			base := testclient.New(pod)
			stale := &corev1.Pod{}
			if err := base.Get(context.Background(), client.ObjectKeyFromObject(pod), stale); err != nil {
				t.Fatal(err)
			}
			// The kubelet writes once, before our first patch; the cache never sees it.
			live := stale.DeepCopy()
			live.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", RestartCount: 1}}
			if err := base.Status().Update(context.Background(), live); err != nil {
				t.Fatal(err)
			}
			writes := 0
			cached := interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
				Get: func(_ context.Context, _ client.WithWatch, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
					stale.DeepCopyInto(obj.(*corev1.Pod))
					return nil
				},
				SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
					writes++
					return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
				},
			})
			var fresh client.Reader
			if tc.freshReader {
				fresh = base
			}
			_, err := Patch(context.Background(), cached, fresh, stale, func(p *corev1.Pod) bool { return Hold(p, holder, now) })
			if (err != nil) != tc.wantErr {
				t.Fatalf("Patch error = %v, want error %v", err, tc.wantErr)
			}
			if writes != tc.wantWrites {
				t.Errorf("writes = %d, want %d", writes, tc.wantWrites)
			}
		})
	}
}

// TestPatchOwnNeverConflictsAndKeepsOtherConditions: a condition only the caller writes is
// written from a stale copy without a conflict, and the kubelet's conditions stay.
func TestPatchOwnNeverConflictsAndKeepsOtherConditions(t *testing.T) {
	pod := builder.Pod("p", "ns").Condition(appspub.InPlaceUpdateReady, corev1.ConditionTrue).Obj()
	c := testclient.New(pod)
	stale := &corev1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(pod), stale); err != nil {
		t.Fatal(err)
	}
	live := stale.DeepCopy()
	live.Status.Conditions = append(live.Status.Conditions, cond(corev1.PodReady, corev1.ConditionTrue, earlier, "", ""))
	if err := c.Status().Update(context.Background(), live); err != nil {
		t.Fatal(err)
	}
	out, err := PatchOwn(context.Background(), c, stale, cond(appspub.InPlaceUpdateReady, corev1.ConditionFalse, now, "StartInPlaceUpdate", ""))
	if err != nil {
		t.Fatalf("PatchOwn from a stale copy: %v", err)
	}
	if got := Get(out, appspub.InPlaceUpdateReady); got == nil || got.Status != corev1.ConditionFalse {
		t.Errorf("InPlaceUpdateReady = %+v, want False", got)
	}
	if got := Get(out, corev1.PodReady); got == nil || got.Status != corev1.ConditionTrue {
		t.Errorf("the kubelet's Ready = %+v, want it kept True", got)
	}
}
