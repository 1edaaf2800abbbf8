package advancedcronjob

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

var created = time.Date(2026, 3, 1, 10, 0, 30, 0, time.UTC)

func acj(mutate ...func(*appsv1alpha1.AdvancedCronJob)) *appsv1alpha1.AdvancedCronJob {
	a := &appsv1alpha1.AdvancedCronJob{ObjectMeta: metav1.ObjectMeta{Name: "warm", Namespace: "ns", UID: "acj-uid", CreationTimestamp: metav1.NewTime(created)}}
	a.Spec.Schedule = "* * * * *"
	a.Spec.ConcurrencyPolicy = appsv1alpha1.AllowConcurrent
	a.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](3)
	a.Spec.FailedJobsHistoryLimit = ptr.To[int32](1)
	a.Spec.Template.ImageListPullJobTemplate = &appsv1alpha1.ImageListPullJobTemplateSpec{}
	for _, m := range mutate {
		m(a)
	}
	return a
}

func at(hh, mm int) time.Time { return time.Date(2026, 3, 1, hh, mm, 0, 0, time.UTC) }

// kid is a child created for the run at run, in state s.
func kid(run time.Time, s childState) child {
	o := &appsv1alpha1.ImageListPullJob{ObjectMeta: metav1.ObjectMeta{Name: "warm-" + run.Format("1504"), Namespace: "ns"}}
	return child{obj: o, state: s, scheduledAt: &run, started: run}
}

func names(objs []client.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	return out
}

func TestNextRuns(t *testing.T) {
	type tcase struct {
		acj        *appsv1alpha1.AdvancedCronJob
		last       *time.Time
		now        time.Time
		wantMissed time.Time
		wantNext   time.Time
		wantErr    bool
	}
	tests := map[string]tcase{
		"just created, nothing is due yet and the next minute is next": {
			acj:      acj(),
			now:      created.Add(10 * time.Second),
			wantNext: at(10, 1),
		},
		"one minute on, the run of that minute is due": {
			acj:        acj(),
			now:        at(10, 1).Add(time.Second),
			wantMissed: at(10, 1),
			wantNext:   at(10, 2),
		},
		"after several missed runs only the latest is due": {
			acj:        acj(),
			now:        at(10, 5).Add(time.Second),
			wantMissed: at(10, 5),
			wantNext:   at(10, 6),
		},
		"the run already started is not due again": {
			acj:      acj(),
			last:     ptr.To(at(10, 5)),
			now:      at(10, 5).Add(30 * time.Second),
			wantNext: at(10, 6),
		},
		"timeZone shifts an hourly-at-hour schedule": {
			acj: acj(func(a *appsv1alpha1.AdvancedCronJob) {
				a.Spec.Schedule = "0 12 * * *"
				a.Spec.TimeZone = ptr.To("Asia/Tokyo")
			}),
			now:        at(10, 0).Add(2 * time.Hour),
			wantMissed: time.Time{},
			wantNext:   time.Date(2026, 3, 2, 3, 0, 0, 0, time.UTC),
		},
		"more than 100 missed runs without a starting deadline is an error": {
			acj:     acj(),
			now:     at(13, 0),
			wantErr: true,
		},
		"a starting deadline bounds the search for missed runs": {
			acj:        acj(func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.StartingDeadlineSeconds = ptr.To[int64](120) }),
			now:        at(13, 0).Add(time.Second),
			wantMissed: at(13, 0),
			wantNext:   at(13, 1),
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		s, err := parseSchedule(tt.acj)
		if err != nil {
			t.Fatal(err)
		}
		missed, next, err := nextRuns(tt.acj, s, tt.last, tt.now)
		testkit.Diff(t, "err?, missed, next", []any{tt.wantErr, tt.wantMissed.UTC(), tt.wantNext.UTC()}, []any{err != nil, missed.UTC(), next.UTC()})
	})
}

func TestParseSchedule(t *testing.T) {
	type tcase struct {
		acj     *appsv1alpha1.AdvancedCronJob
		wantErr string
	}
	tests := map[string]tcase{
		"a five-field schedule parses": {acj: acj()},
		"a six-field schedule is refused": {
			acj:     acj(func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.Schedule = "0 * * * * *" }),
			wantErr: `spec.schedule "0 * * * * *" is not a five-field cron schedule: expected exactly 5 fields, found 6: [0 * * * * *]`,
		},
		"an unknown time zone is refused": {
			acj:     acj(func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.TimeZone = ptr.To("Mars/Olympus") }),
			wantErr: `spec.timeZone "Mars/Olympus" is not a known IANA time zone: unknown time zone Mars/Olympus`,
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		_, err := parseSchedule(tt.acj)
		got := ""
		if err != nil {
			got = err.Error()
		}
		testkit.Diff(t, "error", tt.wantErr, got)
	})
}

func TestPlanRun(t *testing.T) {
	now := at(10, 4).Add(time.Second)
	type tcase struct {
		acj         *appsv1alpha1.AdvancedCronJob
		children    []child
		paused      bool
		wantRun     *time.Time
		wantPrune   []string
		wantReplace []string
		wantSkip    string
		wantNext    time.Time
	}
	tests := map[string]tcase{
		"a due run starts": {
			acj:      acj(),
			children: []child{kid(at(10, 3), childSucceeded)},
			wantRun:  ptr.To(at(10, 4)),
			wantNext: at(10, 5),
		},
		"Forbid skips a due run while a job is active": {
			acj:      acj(func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.ConcurrencyPolicy = appsv1alpha1.ForbidConcurrent }),
			children: []child{kid(at(10, 3), childActive)},
			wantSkip: "concurrencyPolicy Forbid and a job is still active",
			wantNext: at(10, 5),
		},
		"Replace deletes the active job and starts the run": {
			acj:         acj(func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.ConcurrencyPolicy = appsv1alpha1.ReplaceConcurrent }),
			children:    []child{kid(at(10, 3), childActive)},
			wantReplace: []string{"warm-1003"},
			wantRun:     ptr.To(at(10, 4)),
			wantNext:    at(10, 5),
		},
		"Allow starts a run next to an active job": {
			acj:      acj(),
			children: []child{kid(at(10, 3), childActive)},
			wantRun:  ptr.To(at(10, 4)),
			wantNext: at(10, 5),
		},
		"a run later than startingDeadlineSeconds is skipped": {
			acj:      acj(func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.StartingDeadlineSeconds = ptr.To[int64](0) }),
			children: []child{kid(at(10, 3), childSucceeded)},
			wantNext: at(10, 5),
		},
		"finished jobs beyond the history limits are pruned, oldest first": {
			acj: acj(),
			children: []child{
				kid(at(10, 0), childSucceeded), kid(at(10, 1), childFailed), kid(at(10, 2), childFailed),
				kid(at(10, 3), childSucceeded), kid(at(10, 4), childSucceeded), kid(at(9, 59), childSucceeded),
			},
			wantPrune: []string{"warm-1001", "warm-0959"},
			wantNext:  at(10, 5),
		},
		"finished jobs that started in the same second are pruned by their run": {
			acj: acj(func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](1) }),
			children: func() []child {
				var out []child
				for _, m := range []int{3, 1, 2} {
					c := kid(at(10, m), childSucceeded)
					c.started = at(10, 3)
					out = append(out, c)
				}
				return out
			}(),
			wantPrune: []string{"warm-1001", "warm-1002"},
			wantRun:   ptr.To(at(10, 4)),
			wantNext:  at(10, 5),
		},
		"paused prunes the history but starts nothing and sets no wake-up": {
			acj:       acj(func(a *appsv1alpha1.AdvancedCronJob) { a.Spec.FailedJobsHistoryLimit = ptr.To[int32](0) }),
			children:  []child{kid(at(10, 1), childFailed)},
			paused:    true,
			wantPrune: []string{"warm-1001"},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		s, err := parseSchedule(tt.acj)
		if err != nil {
			t.Fatal(err)
		}
		if tt.paused {
			s = nil
		}
		p, err := planRun(tt.acj, tt.children, s, now)
		if err != nil {
			t.Fatal(err)
		}
		want := []any{tt.wantRun, tt.wantPrune, tt.wantReplace, tt.wantSkip, tt.wantNext.UTC()}
		got := []any{p.run, names(p.prune), names(p.replace), p.skip, p.next.UTC()}
		testkit.Diff(t, "run, prune, replace, skip, next", want, got)
	})
}

func TestComputeStatus(t *testing.T) {
	a := acj(func(a *appsv1alpha1.AdvancedCronJob) {
		a.Status.LastScheduleTime = ptr.To(metav1.NewTime(at(9, 0)))
	})
	children := []child{kid(at(10, 2), childActive), kid(at(10, 3), childSucceeded)}
	created := &appsv1alpha1.ImageListPullJob{ObjectMeta: metav1.ObjectMeta{Name: "warm-1004", Namespace: "ns", UID: "u4"}}
	got := computeStatus(a, children, created, runPlan{run: ptr.To(at(10, 4))})
	want := appsv1alpha1.AdvancedCronJobStatus{
		Type: appsv1alpha1.ImageListPullJobTemplate,
		Active: []corev1.ObjectReference{
			{Kind: "ImageListPullJob", APIVersion: "apps.kruise.io/v1alpha1", Namespace: "ns", Name: "warm-1002"},
			{Kind: "ImageListPullJob", APIVersion: "apps.kruise.io/v1alpha1", Namespace: "ns", Name: "warm-1004", UID: "u4"},
		},
		LastScheduleTime: ptr.To(metav1.NewTime(at(10, 4))),
	}
	testkit.Diff(t, "status", want, got)
}
