package kit

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
	"github.com/kruise-addon/kruise-addon/controllers/internal/testclient"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

var webKey = types.NamespacedName{Namespace: "ns", Name: "web"}

func cloneSet(deleting bool) *appsv1alpha1.CloneSet {
	cs := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: webKey.Namespace, Name: webKey.Name}}
	if deleting {
		cs.Finalizers = []string{"example.com/hold"}
		cs.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	}
	return cs
}

func TestObjectReconcile(t *testing.T) {
	type tcase struct {
		stored       *appsv1alpha1.CloneSet
		getErr       error
		deleting     bool
		keepDeleting bool
		wantRan      string
		wantGone     bool
		wantErr      string
	}
	tests := map[string]tcase{
		"a found object runs the pass":                       {stored: cloneSet(false), wantRan: "pass"},
		"a gone object is forgotten and ends the pass":       {wantGone: true},
		"a read error is returned with what was read":        {stored: cloneSet(false), getErr: errors.New("etcd is down"), wantErr: "get CloneSet: etcd is down"},
		"a deleting object ends the pass":                    {stored: cloneSet(true)},
		"a deleting object runs the kind's deletion pass":    {stored: cloneSet(true), deleting: true, wantRan: "deleting"},
		"a deleting object runs the pass when the kind asks": {stored: cloneSet(true), keepDeleting: true, wantRan: "pass"},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		b := testclient.Builder()
		if tt.stored != nil {
			b = b.WithObjects(tt.stored)
		}
		c := interceptor.NewClient(b.Build(), interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if tt.getErr != nil {
				return tt.getErr
			}
			return c.Get(ctx, key, obj, opts...)
		}})
		ran, gone := "", false
		pass := func(name string) Pass[*appsv1alpha1.CloneSet] {
			return func(_ context.Context, cs *appsv1alpha1.CloneSet) (ctrl.Result, error) {
				if cs.Name != webKey.Name {
					t.Errorf("pass got %q, want the stored object", cs.Name)
				}
				ran = name
				return ctrl.Result{}, nil
			}
		}
		o := Object[*appsv1alpha1.CloneSet]{Reader: c, Kind: "CloneSet", Gone: func(ctrl.Request) { gone = true }, KeepDeleting: tt.keepDeleting, Pass: pass("pass")}
		if tt.deleting {
			o.Deleting = pass("deleting")
		}
		_, err := o.Reconcile(context.Background(), ctrl.Request{NamespacedName: webKey})
		if got := errString(err); got != tt.wantErr {
			t.Errorf("error = %q, want %q", got, tt.wantErr)
		}
		if ran != tt.wantRan || gone != tt.wantGone {
			t.Errorf("ran %q, gone %v; want %q, %v", ran, gone, tt.wantRan, tt.wantGone)
		}
	})
}

func TestWriteStatus(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "apps.kruise.io", Resource: "clonesets"}, "web", errors.New("the object has been modified"))
	type tcase struct {
		replicas     int32
		fail         error
		wantWrites   int
		wantResult   ctrl.Result
		wantErr      string
		wantReplicas int32
	}
	tests := map[string]tcase{
		"an unchanged status is not written":                              {replicas: 0, wantWrites: 0},
		"a changed status is written":                                     {replicas: 3, wantWrites: 1, wantReplicas: 3},
		"a write that lost to a newer object is no error and looks again": {replicas: 3, fail: conflict, wantWrites: 1, wantResult: ctrl.Result{RequeueAfter: StaleRequeue}},
		"any other failure is returned wrapped":                           {replicas: 3, fail: errors.New("etcd is down"), wantWrites: 1, wantErr: "update status: etcd is down"},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		cs := cloneSet(false)
		base := testclient.New(cs)
		writes := 0
		c := interceptor.NewClient(base, interceptor.Funcs{
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				writes++
				if tt.fail != nil {
					return tt.fail
				}
				return c.SubResource(sub).Update(ctx, obj, opts...)
			},
		})
		cur := &appsv1alpha1.CloneSet{}
		if err := base.Get(context.Background(), webKey, cur); err != nil {
			t.Fatal(err)
		}
		res, err := WriteStatus(context.Background(), c, cur, func(cs *appsv1alpha1.CloneSet) { cs.Status.Replicas = tt.replicas })
		if got := errString(err); got != tt.wantErr {
			t.Errorf("error = %q, want %q", got, tt.wantErr)
		}
		if res != tt.wantResult || writes != tt.wantWrites {
			t.Errorf("result %+v after %d writes, want %+v after %d", res, writes, tt.wantResult, tt.wantWrites)
		}
		stored := &appsv1alpha1.CloneSet{}
		if err := base.Get(context.Background(), webKey, stored); err != nil {
			t.Fatal(err)
		}
		if stored.Status.Replicas != tt.wantReplicas {
			t.Errorf("stored replicas %d, want %d", stored.Status.Replicas, tt.wantReplicas)
		}
		if tt.wantWrites == 1 && tt.fail == nil && cur.ResourceVersion != stored.ResourceVersion {
			t.Errorf("object holds resourceVersion %s after the write, want the written %s", cur.ResourceVersion, stored.ResourceVersion)
		}
	})
}

func TestConditions(t *testing.T) {
	typeOf := func(c *appsv1alpha1.JobCondition) appsv1alpha1.JobConditionType { return c.Type }
	complete := appsv1alpha1.JobCondition{Type: appsv1alpha1.JobComplete, Reason: "Done"}
	failed := appsv1alpha1.JobCondition{Type: appsv1alpha1.JobFailed, Reason: "Failed"}
	type tcase struct {
		conds     []appsv1alpha1.JobCondition
		op        func([]appsv1alpha1.JobCondition) []appsv1alpha1.JobCondition
		want      []appsv1alpha1.JobCondition
		wantIndex int
	}
	tests := map[string]tcase{
		"setting a condition of a new type appends it": {
			conds: []appsv1alpha1.JobCondition{failed}, op: func(cs []appsv1alpha1.JobCondition) []appsv1alpha1.JobCondition {
				return SetCondition(cs, typeOf, complete)
			},
			want: []appsv1alpha1.JobCondition{failed, complete}, wantIndex: 1,
		},
		"setting a condition of a present type replaces it in place": {
			conds: []appsv1alpha1.JobCondition{{Type: appsv1alpha1.JobComplete, Reason: "Old"}, failed},
			op: func(cs []appsv1alpha1.JobCondition) []appsv1alpha1.JobCondition {
				return SetCondition(cs, typeOf, complete)
			},
			want: []appsv1alpha1.JobCondition{complete, failed}, wantIndex: 0,
		},
		"removing a condition keeps the others in order": {
			conds: []appsv1alpha1.JobCondition{complete, failed},
			op: func(cs []appsv1alpha1.JobCondition) []appsv1alpha1.JobCondition {
				return RemoveCondition(cs, typeOf, appsv1alpha1.JobComplete)
			},
			want: []appsv1alpha1.JobCondition{failed}, wantIndex: -1,
		},
		"removing the last condition leaves none": {
			conds: []appsv1alpha1.JobCondition{complete},
			op: func(cs []appsv1alpha1.JobCondition) []appsv1alpha1.JobCondition {
				return RemoveCondition(cs, typeOf, appsv1alpha1.JobComplete)
			},
			want: nil, wantIndex: -1,
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		got := tt.op(tt.conds)
		testkit.Diff(t, "conditions", tt.want, got)
		if i := FindCondition(got, typeOf, appsv1alpha1.JobComplete); i != tt.wantIndex {
			t.Errorf("FindCondition = %d, want %d", i, tt.wantIndex)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestEnqueueAllAndLookup(t *testing.T) {
	web, api := cloneSet(false), cloneSet(false)
	api.Name = "api"
	c := testclient.New(web, api)
	got := EnqueueAll(c, &appsv1alpha1.CloneSetList{})(context.Background(), nil)
	want := []ctrl.Request{{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "api"}}, {NamespacedName: webKey}}
	testkit.Diff(t, "an event enqueues every object of the kind", want, got)
	for key, wantFound := range map[types.NamespacedName]bool{webKey: true, {Namespace: "ns", Name: "gone"}: false} {
		found, err := Lookup(context.Background(), c, key, &appsv1alpha1.CloneSet{})
		if err != nil || found != wantFound {
			t.Errorf("Lookup(%s) = %v, %v; want %v without error", key, found, err, wantFound)
		}
	}
}

func TestNodeAnd(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	ni := &appsv1alpha1.NodeImage{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}
	c := testclient.New(node, ni)
	type tcase struct {
		name              string
		wantNode, wantObj bool
	}
	tests := map[string]tcase{
		"a node without its object reads the node only":    {name: "n1", wantNode: true},
		"an object without its node reads the object only": {name: "n2", wantObj: true},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		_, n, obj, err := NodeAnd[*appsv1alpha1.NodeImage](context.Background(), c, "NodeImage", ctrl.Request{NamespacedName: types.NamespacedName{Name: tt.name}})
		if err != nil || (n != nil) != tt.wantNode || (obj != nil) != tt.wantObj {
			t.Errorf("node %v, object %v, error %v; want node %v, object %v", n != nil, obj != nil, err, tt.wantNode, tt.wantObj)
		}
	})
}

func TestPodOwnerPass(t *testing.T) {
	type tcase struct {
		pendingCreate  bool
		preDownloadErr error
		syncErr        error
		stale          bool
		wantSteps      []string
		wantResult     ctrl.Result
		wantErr        string
	}
	tests := map[string]tcase{
		"a pass runs every step in order and returns the sync's result": {
			wantSteps: []string{"read", "predownload", "sync", "status", "truncate"}, wantResult: ctrl.Result{RequeueAfter: time.Minute},
		},
		"a pass waits while the cache has not shown a pod it created, until the wait would time out": {
			pendingCreate: true, wantResult: ctrl.Result{RequeueAfter: ownedpods.ExpectationTimeout},
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
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
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
		testkit.Diff(t, "steps", tt.wantSteps, steps)
		if res != tt.wantResult {
			t.Errorf("result %+v, want %+v", res, tt.wantResult)
		}
	})
}
