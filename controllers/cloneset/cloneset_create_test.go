package cloneset

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/controllers/internal/testclient"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// scripted returns a random-ID source that answers with the given IDs in turn, for its length,
// and records how many IDs of each length were asked for.
func scripted(byLength map[int][]string, asked map[int]int) func(int) string {
	return func(n int) string {
		asked[n]++
		ids := byLength[n]
		if len(ids) == 0 {
			return strings.Repeat("z", n)
		}
		id := ids[0]
		if len(ids) > 1 {
			byLength[n] = ids[1:]
		}
		return id
	}
}

func TestNewInstanceID(t *testing.T) {
	type tcase struct {
		name      string
		maxLength int
		taken     []string
		random    map[int][]string
		wantID    string
		wantErr   string
		wantAsked map[int]int
	}
	tests := map[string]tcase{
		"a free 5-character ID is given at the first try": {
			name: "web", maxLength: 8, random: map[int][]string{5: {"b2c4d"}},
			wantID: "b2c4d", wantAsked: map[int]int{5: 1},
		},
		"an ID a pod or claim already uses is not given again": {
			name: "web", maxLength: 8, taken: []string{"b2c4d"}, random: map[int][]string{5: {"b2c4d", "fghjk"}},
			wantID: "fghjk", wantAsked: map[int]int{5: 2},
		},
		"an ID whose pod name exists is not given": {
			name: "web", maxLength: 8, taken: []string{"web-b2c4d"}, random: map[int][]string{5: {"b2c4d", "fghjk"}},
			wantID: "fghjk", wantAsked: map[int]int{5: 2},
		},
		"in a crowded 5-character space the ID grows to 6 characters after a bounded number of tries": {
			name: "web", maxLength: 8, taken: []string{"zzzzz"}, random: map[int][]string{5: {"zzzzz"}, 6: {"b2c4d6"}},
			wantID: "b2c4d6", wantAsked: map[int]int{5: idAttempts, 6: 1},
		},
		"when every length up to the longest collides it is an error that ends": {
			name: "web", maxLength: 8, taken: []string{"zzzzz", "zzzzzz", "zzzzzzz", "zzzzzzzz"},
			wantErr:   "no free instance ID for CloneSet web: 16 random IDs of each length from 5 to 8 characters were all in use",
			wantAsked: map[int]int{5: idAttempts, 6: idAttempts, 7: idAttempts, 8: idAttempts},
		},
		"a name that leaves no room for an ID is an error": {
			name: "web", maxLength: 4,
			wantErr:   "no instance ID fits: a pod or claim name of CloneSet web would be longer than 253 characters",
			wantAsked: map[int]int{},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		taken := map[string]bool{}
		for _, id := range tt.taken {
			taken[id] = true
		}
		asked := map[int]int{}
		id, err := newInstanceID(tt.name, tt.maxLength, taken, scripted(tt.random, asked))
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		testkit.Diff(t, "id, error, IDs asked for by length", []any{tt.wantID, tt.wantErr, tt.wantAsked}, []any{id, gotErr, asked})
	})
}

func TestMaxIDLength(t *testing.T) {
	cs := func(name string, claims ...string) *appsv1alpha1.CloneSet {
		c := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: name}}
		for _, n := range claims {
			c.Spec.VolumeClaimTemplates = append(c.Spec.VolumeClaimTemplates, corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: n}})
		}
		return c
	}
	type tcase struct {
		cs   *appsv1alpha1.CloneSet
		want int
	}
	tests := map[string]tcase{
		"a short name allows the longest ID":                              {cs: cs("web"), want: maxInstanceIDLength},
		"a pod name may not pass 253 characters":                          {cs: cs(strings.Repeat("a", 246)), want: 6},
		"a claim name (template-cloneset-id) may not pass 253 characters": {cs: cs(strings.Repeat("a", 200), strings.Repeat("d", 45)), want: 6},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		testkit.Diff(t, "maxIDLength(tt.cs)", tt.want, maxIDLength(tt.cs))
	})
}

func TestInstanceIDsHandsOutFreeIDsFirstThenNewDistinctOnes(t *testing.T) {
	pod := func(name, id string, terminating bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{appsv1alpha1.CloneSetInstanceID: id}}}
		if terminating {
			p.DeletionTimestamp = &metav1.Time{}
		}
		return p
	}
	claim := func(id string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-web-" + id, Labels: map[string]string{appsv1alpha1.CloneSetInstanceID: id}}}
	}
	s := &scope{
		cs:          &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}},
		pods:        []*corev1.Pod{pod("web-aaaaa", "aaaaa", false)},
		terminating: []*corev1.Pod{pod("web-ccccc", "ccccc", true)},
		claims:      []*corev1.PersistentVolumeClaim{claim("aaaaa"), claim("bbbbb"), claim("ccccc")},
	}
	ids := newInstanceIDs(s, utilrand.String)
	if got := ids.held(5); got != 1 {
		t.Errorf("held(5) = %d, want 1: the terminating pod's claims wait for its replacement", got)
	}
	first, err := ids.next(1)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Diff(t, "first ID is the free one with claims", []string{"bbbbb"}, first)
	seen := map[string]bool{"aaaaa": true, "bbbbb": true, "ccccc": true}
	for range 4 {
		batch, err := ids.next(64)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range batch {
			if seen[id] || len(id) != instanceIDLength {
				t.Fatalf("ID %q given twice, or not %d characters", id, instanceIDLength)
			}
			seen[id] = true
		}
	}
}

func TestCreatePods(t *testing.T) {
	type trigger func(ctx context.Context, c client.WithWatch, cancel context.CancelFunc, n int) error
	// after runs f once the n-th create has been made.
	after := func(n int, f func(ctx context.Context, c client.WithWatch, cancel context.CancelFunc) error) trigger {
		return func(ctx context.Context, c client.WithWatch, cancel context.CancelFunc, made int) error {
			if made == n {
				return f(ctx, c, cancel)
			}
			return nil
		}
	}
	changeSpec := func(ctx context.Context, c client.WithWatch, _ context.CancelFunc) error {
		cs := &appsv1alpha1.CloneSet{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, cs); err != nil {
			return err
		}
		cs.Generation++
		return c.Update(ctx, cs)
	}
	deleteIt := func(ctx context.Context, c client.WithWatch, _ context.CancelFunc) error {
		return c.Delete(ctx, &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}})
	}
	cancelIt := func(_ context.Context, _ client.WithWatch, cancel context.CancelFunc) error { cancel(); return nil }

	type tcase struct {
		create      int
		trigger     trigger
		failCreate  int // the n-th create fails; 0 for none
		wantPods    int
		wantPending int
		wantMore    bool
		wantErr     bool
	}
	tests := map[string]tcase{
		"a huge plan creates one reconcile's share and says more is left": {
			create: 100_000, wantPods: MaxCreatesPerReconcile, wantPending: MaxCreatesPerReconcile, wantMore: true,
		},
		"a small plan creates every pod and leaves nothing": {create: 10, wantPods: 10, wantPending: 10},
		"a spec change during the third batch stops creation before the fourth": {
			create: 100_000, trigger: after(7, changeSpec), wantPods: 7, wantPending: 7,
		},
		"a deletion during the first batch stops creation before the second": {
			create: 100_000, trigger: after(1, deleteIt), wantPods: 1, wantPending: 1,
		},
		"a cancelled reconcile stops before the next batch": {
			create: 100_000, trigger: after(3, cancelIt), wantPods: 3, wantPending: 3,
		},
		"a failed create ends creation after its batch, and the failed pod is not awaited": {
			create: 100_000, failCreate: 2, wantPods: 2, wantPending: 2, wantErr: true,
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cs := kinds.CloneSet("web", "ns").Replicas(int32(tt.create)).Obj()
		cs.UID, cs.Generation = "cs-uid", 1
		var mu sync.Mutex
		made := 0
		c := testclient.Builder(cs).WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if _, ok := obj.(*corev1.Pod); !ok {
					return c.Create(ctx, obj, opts...)
				}
				mu.Lock()
				defer mu.Unlock()
				made++
				if made == tt.failCreate {
					return fmt.Errorf("quota exceeded")
				}
				if err := c.Create(ctx, obj, opts...); err != nil {
					return err
				}
				if tt.trigger != nil {
					return tt.trigger(context.Background(), c, cancel, made)
				}
				return nil
			},
		}).Build()
		r := newReconciler(c, c, nil, setup.Deps{Clock: clock.RealClock{}, Gates: features.NewGate(), Workers: func(string) int { return 1 }})
		data, err := revision.TemplatePatch(cs.Spec.Template)
		if err != nil {
			t.Fatal(err)
		}
		rev := revision.New(cs, controllerKind, cs.Spec.Template.Labels, data, 1, nil)
		s := &scope{cs: cs, Tracked: revision.Tracked{Revisions: revision.Revisions{Current: rev, Update: rev}}}

		more, err := r.createPods(ctx, s, plan{createUpdated: tt.create})

		var pods corev1.PodList
		if err := c.List(context.Background(), &pods); err != nil {
			t.Fatal(err)
		}
		pending := len(r.ScaleExp.Pending(client.ObjectKeyFromObject(cs).String())[expectations.Create])
		testkit.Diff(t, fmt.Sprintf("pods, awaited creates, more, error (error: %v)", err),
			[]any{tt.wantPods, tt.wantPending, tt.wantMore, tt.wantErr}, []any{len(pods.Items), pending, more, err != nil})
	})
}
