package nodeops

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/advancedcronjob"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// catchUpClock brings the fake clock to real time, so that a new AdvancedCronJob's creation
// timestamp (set by the apiserver) is not in the fake clock's future.
func catchUpClock() {
	if now := time.Now(); now.After(cronClock.Now()) {
		cronClock.SetTime(now)
	}
}

// stepToNextRun moves the fake clock a second past the next minute and returns that minute,
// the run now due.
func stepToNextRun() time.Time {
	run := cronClock.Now().Truncate(time.Minute).Add(time.Minute)
	cronClock.SetTime(run.Add(time.Second))
	return run
}

func deleteAfter(t *testing.T, obj client.Object) {
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
}

func childName(acj string, run time.Time) string { return fmt.Sprintf("%s-%d", acj, run.Unix()) }

func listPullJobs(ctx context.Context, ns string) ([]string, error) {
	list := &appsv1alpha1.ImageListPullJobList{}
	if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var names []string
	for _, j := range list.Items {
		names = append(names, j.Name)
	}
	sort.Strings(names)
	return names, nil
}

// finishPullJob plays the ImageListPullJob controller: the job's one image is on every node.
func finishPullJob(t *testing.T, ns, name string) {
	t.Helper()
	framework.ChangeStatus(t, env.Client, client.ObjectKey{Namespace: ns, Name: name}, func(j *appsv1alpha1.ImageListPullJob) {
		now := metav1.Now()
		j.Status = appsv1alpha1.ImageListPullJobStatus{StartTime: &now, CompletionTime: &now, Desired: 1, Completed: 1, Succeeded: 1}
	})
}

func getACJ(ctx context.Context, ns, name string) (*appsv1alpha1.AdvancedCronJob, error) {
	acj := &appsv1alpha1.AdvancedCronJob{}
	return acj, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, acj)
}

func TestAdvancedCronJobPrePullsOnSchedule(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "acj-", nil)
	catchUpClock()
	acj := kinds.AdvancedCronJob("warm", ns).Schedule("*/1 * * * *").SuccessfulJobsHistoryLimit(2).
		ImageListPullJobTemplate(map[string]string{"team": "web"}, "registry.example.com/web/app:1").Obj()
	framework.Create(t, env.Client, acj)
	deleteAfter(t, acj)

	var runs []time.Time
	for i := 0; i < 4; i++ {
		run := stepToNextRun()
		runs = append(runs, run)
		name := childName("warm", run)
		framework.Eventually(t, framework.Medium, fmt.Sprintf("run %d creates ImageListPullJob %s", i+1, name), func(ctx context.Context) error {
			j := &appsv1alpha1.ImageListPullJob{}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
				return err
			}
			want := []any{"web", run.UTC().Format(time.RFC3339), []string{"registry.example.com/web/app:1"}, "warm"}
			got := []any{j.Labels["team"], j.Annotations[advancedcronjob.ScheduledAtAnnotation], j.Spec.Images, metav1.GetControllerOf(j).Name}
			if diff := cmp.Diff(want, got); diff != "" {
				return fmt.Errorf("team label, scheduled-at, images, owner (-want +got):\n%s", diff)
			}
			return nil
		})
		framework.Eventually(t, framework.Medium, "status lists the new job as active", func(ctx context.Context) error {
			a, err := getACJ(ctx, ns, "warm")
			if err != nil {
				return err
			}
			if len(a.Status.Active) != 1 || a.Status.Active[0].Name != name || a.Status.Type != appsv1alpha1.ImageListPullJobTemplate {
				return fmt.Errorf("status %+v", a.Status)
			}
			return nil
		})
		finishPullJob(t, ns, name)
	}

	want := []string{childName("warm", runs[2]), childName("warm", runs[3])}
	framework.Eventually(t, framework.Medium, "only the two newest succeeded jobs are kept and none is active", func(ctx context.Context) error {
		names, err := listPullJobs(ctx, ns)
		if err != nil {
			return err
		}
		if diff := cmp.Diff(want, names); diff != "" {
			return fmt.Errorf("jobs (-want +got):\n%s", diff)
		}
		a, err := getACJ(ctx, ns, "warm")
		if err != nil {
			return err
		}
		if len(a.Status.Active) != 0 || a.Status.LastScheduleTime == nil || !a.Status.LastScheduleTime.Time.Equal(runs[3]) {
			return fmt.Errorf("status %+v, want no active job and lastScheduleTime %s", a.Status, runs[3])
		}
		return nil
	})

	t.Run("paused starts no run until it is unpaused", func(t *testing.T) {
		setPaused(t, ns, "warm", true)
		framework.Eventually(t, framework.Medium, "the controller drops its wake-up for the paused AdvancedCronJob", func(context.Context) error {
			if cronClock.HasWaiters() {
				return fmt.Errorf("a timer still waits on the clock")
			}
			return nil
		})
		stepToNextRun()
		run := stepToNextRun()
		framework.Consistently(t, quiet, "no job is created while paused", func(ctx context.Context) error {
			names, err := listPullJobs(ctx, ns)
			if err != nil {
				return err
			}
			if diff := cmp.Diff(want, names); diff != "" {
				return fmt.Errorf("jobs changed while paused (-want +got):\n%s", diff)
			}
			return nil
		})
		setPaused(t, ns, "warm", false)
		framework.Eventually(t, framework.Medium, "unpaused, the latest due run starts", func(ctx context.Context) error {
			j := &appsv1alpha1.ImageListPullJob{}
			return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: childName("warm", run)}, j)
		})
	})
}

func setPaused(t *testing.T, ns, name string, paused bool) {
	t.Helper()
	framework.Change(t, env.Client, client.ObjectKey{Namespace: ns, Name: name}, func(a *appsv1alpha1.AdvancedCronJob) {
		a.Spec.Paused = ptr.To(paused)
	})
}

// reportCronJob is a per-minute AdvancedCronJob that runs a report Job.
func reportCronJob(ns, name string) *appsv1alpha1.AdvancedCronJob {
	return &appsv1alpha1.AdvancedCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1alpha1.AdvancedCronJobSpec{
			Schedule: "* * * * *",
			Template: appsv1alpha1.CronJobTemplate{JobTemplate: &batchv1.JobTemplateSpec{
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "report", Image: "registry.example.com/tools/report:1"}},
				}}},
			}},
		},
	}
}

func TestAdvancedCronJobCreatesJobs(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "acj-", nil)
	catchUpClock()
	acj := reportCronJob(ns, "report")
	acj.Spec.TimeZone = ptr.To("Europe/Paris")
	acj.Spec.ConcurrencyPolicy = appsv1alpha1.ReplaceConcurrent
	framework.Create(t, env.Client, acj)
	deleteAfter(t, acj)

	first := stepToNextRun()
	framework.Eventually(t, framework.Medium, "the first run creates a Job from the template", func(ctx context.Context) error {
		j := &batchv1.Job{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: childName("report", first)}, j); err != nil {
			return err
		}
		if img := j.Spec.Template.Spec.Containers[0].Image; img != "registry.example.com/tools/report:1" {
			return fmt.Errorf("image %q", img)
		}
		return nil
	})
	// The Job never finishes here (no job controller runs): Replace deletes it for the next run.
	second := stepToNextRun()
	framework.Eventually(t, framework.Medium, "the next run replaces the still active Job", func(ctx context.Context) error {
		list := &batchv1.JobList{}
		if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		var live []string
		for _, j := range list.Items {
			if j.DeletionTimestamp == nil {
				live = append(live, j.Name)
			}
		}
		if diff := cmp.Diff([]string{childName("report", second)}, live); diff != "" {
			return fmt.Errorf("live jobs (-want +got):\n%s", diff)
		}
		a, err := getACJ(ctx, ns, "report")
		if err != nil {
			return err
		}
		if a.Status.Type != appsv1alpha1.JobTemplate || len(a.Status.Active) != 1 || a.Status.Active[0].Name != childName("report", second) {
			return fmt.Errorf("status %+v", a.Status)
		}
		return nil
	})
}

// TestAdvancedCronJobTooManyMissedRunsWarns: an AdvancedCronJob whose last run lies more than
// 100 runs back and that sets no startingDeadlineSeconds starts no run, and a Warning event
// names the count and the fix. 1.8 has no status field for it and only logs; the event is what
// a user sees with kubectl describe.
func TestAdvancedCronJobTooManyMissedRunsWarns(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "acj-", nil)
	catchUpClock()
	acj := reportCronJob(ns, "behind")
	// Paused until the last run is set back, so that no run due on the shared clock starts
	// first and becomes the last one.
	acj.Spec.Paused = ptr.To(true)
	framework.Create(t, env.Client, acj)
	deleteAfter(t, acj)
	// Three hours of a per-minute schedule lie between the recorded last run and now.
	framework.ChangeStatus(t, env.Client, client.ObjectKey{Namespace: ns, Name: "behind"}, func(a *appsv1alpha1.AdvancedCronJob) {
		a.Status.LastScheduleTime = &metav1.Time{Time: cronClock.Now().Add(-3 * time.Hour)}
	})
	setPaused(t, ns, "behind", false)

	framework.WaitForEvent(t, env.Client, ns, framework.Medium, "a Warning event names the missed runs and spec.startingDeadlineSeconds", func(e *corev1.Event) bool {
		return e.InvolvedObject.Name == "behind" && e.Reason == "TooManyMissedRuns" && e.Type == corev1.EventTypeWarning &&
			strings.Contains(e.Message, "more than 100 missed runs") && strings.Contains(e.Message, "spec.startingDeadlineSeconds")
	})
	jobs := &batchv1.JobList{}
	if err := env.Client.List(context.Background(), jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 0 {
		t.Errorf("%d jobs started, want none while the missed runs are too many", len(jobs.Items))
	}
}
