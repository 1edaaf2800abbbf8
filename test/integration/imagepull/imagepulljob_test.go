package imagepull

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/imagepulljob"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// sampler polls the NodeImages in the background and remembers the most nodes it ever saw
// pulling the job's tag at once.
type sampler struct {
	mu        sync.Mutex
	maxActive int
	seen      []string
	stop      chan struct{}
	done      chan struct{}
}

func startSampler(uid types.UID, image string) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
			states, err := tagStates(context.Background(), uid, image)
			if err != nil {
				continue
			}
			active := activeNodes(states)
			s.mu.Lock()
			if len(active) > s.maxActive {
				s.maxActive, s.seen = len(active), active
			}
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *sampler) finish() (int, []string) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxActive, s.seen
}

// TestJobByLabelPullsOneNodeAtATime runs a job over the three pool=a nodes with parallelism 1,
// reports two successes and one failure as the daemon would, and checks the tags land on
// exactly those nodes, never more than one pulling at once, and the counts and completion.
func TestJobByLabelPullsOneNodeAtATime(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pull-", nil)
	image := "registry.example.com/team/app:v1"
	job := pullJob(ns, "by-label", image, func(j *appsv1alpha1.ImagePullJob) {
		j.Spec.Selector = &appsv1alpha1.ImagePullJobNodeSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "a"}}}
		j.Spec.Parallelism = ptr.To(intstr.FromInt32(1))
		j.Spec.PullPolicy = &appsv1alpha1.PullPolicy{TimeoutSeconds: ptr.To[int32](30), BackoffLimit: ptr.To[int32](2)}
	})
	framework.CreateForTest(t, env.Client, job)
	s := startSampler(job.UID, image)

	// Play the daemon: answer each node as its tag arrives; the last one fails.
	want := nodesOfPool("a")
	outcome := map[string]appsv1alpha1.ImagePullPhase{}
	var failedNode string
	for len(outcome) < len(want) {
		var next string
		framework.Eventually(t, framework.Medium, fmt.Sprintf("tag written on node %d of %d", len(outcome)+1, len(want)), func(ctx context.Context) error {
			states, err := tagStates(ctx, job.UID, image)
			if err != nil {
				return err
			}
			for _, n := range activeNodes(states) {
				if _, done := outcome[n]; !done {
					next = n
					return nil
				}
			}
			return fmt.Errorf("written on %v, answered %v", writtenNodes(states), outcome)
		})
		phase := appsv1alpha1.ImagePhaseSucceeded
		if len(outcome) == len(want)-1 {
			phase, failedNode = appsv1alpha1.ImagePhaseFailed, next
		}
		report(t, next, image, appsv1alpha1.ImagePhasePulling, "")
		report(t, next, image, phase, "")
		outcome[next] = phase
	}

	final := framework.WaitFor(t, env.Client, client.ObjectKeyFromObject(job), framework.Medium, "job completed", func(j *appsv1alpha1.ImagePullJob) error {
		return framework.Want(j.Status.CompletionTime != nil, fmt.Sprintf("status %+v", j.Status))
	})
	maxActive, seen := s.finish()
	if maxActive > 1 {
		t.Errorf("parallelism 1, but %d nodes pulled at once: %v", maxActive, seen)
	}
	if maxActive == 0 {
		t.Errorf("the sampler never saw a node pulling")
	}
	got := final.Status
	wantStatus := appsv1alpha1.ImagePullJobStatus{Desired: 3, Active: 0, Succeeded: 2, Failed: 1, FailedNodes: []string{failedNode}, Message: "job has completed"}
	if diff := cmp.Diff(wantStatus, got, ignoreTimes); diff != "" {
		t.Errorf("status (-want +got)\n%s", diff)
	}
	if got.StartTime == nil {
		t.Errorf("status.startTime not set")
	}

	states, err := tagStates(context.Background(), job.UID, image)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, writtenNodes(states)); diff != "" {
		t.Errorf("NodeImages holding the tag (-want +got)\n%s", diff)
	}
	ni := &appsv1alpha1.NodeImage{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Name: want[0]}, ni); err != nil {
		t.Fatal(err)
	}
	tag := ni.Spec.Images["registry.example.com/team/app"].Tags[0]
	wantRef := corev1.ObjectReference{APIVersion: "apps.kruise.io/v1alpha1", Kind: "ImagePullJob", Namespace: ns, Name: job.Name, UID: job.UID}
	var mine []corev1.ObjectReference
	for _, ref := range tag.OwnerReferences {
		if ref.UID == job.UID {
			mine = append(mine, ref)
		}
	}
	if diff := cmp.Diff([]corev1.ObjectReference{wantRef}, mine); diff != "" {
		t.Errorf("the job's owner reference on the tag (-want +got)\n%s", diff)
	}
	if tag.CreatedAt == nil || tag.PullPolicy == nil || ptr.Deref(tag.PullPolicy.TimeoutSeconds, 0) != 30 || ptr.Deref(tag.PullPolicy.BackoffLimit, 0) != 2 {
		t.Errorf("tag pull policy %+v, createdAt %v: want timeout 30, backoff 2 and a creation time", tag.PullPolicy, tag.CreatedAt)
	}
}

// ignoreTimes leaves the start and completion times out of a status comparison.
var ignoreTimes = cmp.FilterPath(func(p cmp.Path) bool {
	s := p.String()
	return s == "StartTime" || s == "CompletionTime"
}, cmp.Ignore())

// TestActiveDeadlineFailsTheJob runs a job on one node the daemon never answers; once
// activeDeadlineSeconds pass, the node counts as failed and the job completes.
func TestActiveDeadlineFailsTheJob(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pull-", nil)
	job := pullJob(ns, "deadline", "registry.example.com/slow:v1", onNodes("node-3"), func(j *appsv1alpha1.ImagePullJob) {
		j.Spec.CompletionPolicy.ActiveDeadlineSeconds = ptr.To[int64](2)
		j.Spec.PullPolicy = &appsv1alpha1.PullPolicy{TimeoutSeconds: ptr.To[int32](1)}
	})
	framework.CreateForTest(t, env.Client, job)
	framework.Eventually(t, framework.Medium, "job failed by its deadline", func(ctx context.Context) error {
		j, err := getJob(ctx, ns, job.Name)
		if err != nil {
			return err
		}
		want := appsv1alpha1.ImagePullJobStatus{Desired: 1, Failed: 1, FailedNodes: []string{"node-3"}, Message: "job exceeds activeDeadlineSeconds"}
		diff := cmp.Diff(want, j.Status, ignoreTimes)
		return framework.Want(diff == "" && j.Status.CompletionTime != nil, diff)
	})
}

// TestTTLDeletesAFinishedJob checks a job is deleted ttlSecondsAfterFinished after completing.
func TestTTLDeletesAFinishedJob(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pull-", nil)
	image := "registry.example.com/ttl:v1"
	job := pullJob(ns, "ttl", image, onNodes("node-4"), func(j *appsv1alpha1.ImagePullJob) {
		j.Spec.CompletionPolicy.TTLSecondsAfterFinished = ptr.To[int32](2)
	})
	framework.CreateForTest(t, env.Client, job)
	waitTagWritten(t, job, image, "node-4")
	report(t, "node-4", image, appsv1alpha1.ImagePhaseSucceeded, "")
	framework.Eventually(t, framework.Medium, "job completed", func(ctx context.Context) error {
		j, err := getJob(ctx, ns, job.Name)
		if err != nil {
			return err
		}
		return framework.Want(j.Status.CompletionTime != nil && j.Status.Succeeded == 1, fmt.Sprintf("status %+v", j.Status))
	})
	framework.WaitGone(t, env.Client, client.ObjectKeyFromObject(job), &appsv1alpha1.ImagePullJob{}, framework.Medium, "job deleted after its TTL")
}

// TestPodSelectorPicksThePodsNodes checks a job with a podSelector pulls only on the node of
// the matching pod.
func TestPodSelectorPicksThePodsNodes(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pull-", nil)
	framework.CreateForTest(t, env.Client, builder.Pod("web", ns).Label("app", "web").Image("registry.example.com/web:v1").Node("node-2").Obj())
	framework.CreateForTest(t, env.Client, builder.Pod("db", ns).Label("app", "db").Image("registry.example.com/db:v1").Node("node-0").Obj())
	image := "registry.example.com/web:v2"
	job := pullJob(ns, "by-pods", image, func(j *appsv1alpha1.ImagePullJob) {
		j.Spec.PodSelector = &appsv1alpha1.ImagePullJobPodSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
	})
	framework.CreateForTest(t, env.Client, job)
	framework.Eventually(t, framework.Medium, "tag written on node-2 only, job desired 1", func(ctx context.Context) error {
		states, err := tagStates(ctx, job.UID, image)
		if err != nil {
			return err
		}
		j, err := getJob(ctx, ns, job.Name)
		if err != nil {
			return err
		}
		diff := cmp.Diff([]string{"node-2"}, writtenNodes(states))
		return framework.Want(diff == "" && j.Status.Desired == 1, fmt.Sprintf("nodes %s desired %d", diff, j.Status.Desired))
	})
}

// TestPullSecretIsCopiedAndReleased checks a job's pull secret is copied into the daemon config
// namespace with its source recorded, referenced from the NodeImage, and deleted with the job.
func TestPullSecretIsCopiedAndReleased(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pull-", nil)
	src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cred"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"registry.example.com":{"auth":"dTpw"}}}`)}}
	framework.CreateForTest(t, env.Client, src)
	image := "registry.example.com/private:v1"
	job := pullJob(ns, "with-secret", image, onNodes("node-0"), func(j *appsv1alpha1.ImagePullJob) {
		j.Spec.PullSecrets = []string{"cred"}
		j.Spec.CompletionPolicy.Type = appsv1alpha1.Never
	})
	framework.CreateForTest(t, env.Client, job)

	var copyName string
	framework.Eventually(t, framework.Medium, "one copy of the secret in the daemon config namespace", func(ctx context.Context) error {
		copies, err := secretCopies(ctx, src.UID)
		if err != nil {
			return err
		}
		if len(copies) != 1 {
			return fmt.Errorf("%d copies", len(copies))
		}
		c := copies[0]
		copyName = c.Name
		wantAnn := map[string]string{imagepulljob.SourceKeyAnnotation: ns + "/cred", imagepulljob.ReferencesAnnotation: ns + "/with-secret"}
		if diff := cmp.Diff(wantAnn, c.Annotations); diff != "" {
			return errors.New("annotations " + diff)
		}
		if diff := cmp.Diff(src.Data, c.Data); diff != "" || c.Type != src.Type {
			return errors.New("data or type " + diff)
		}
		return nil
	})
	framework.Eventually(t, framework.Medium, "node-0's NodeImage references the copy", func(ctx context.Context) error {
		ni := &appsv1alpha1.NodeImage{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: "node-0"}, ni); err != nil {
			return err
		}
		got := ni.Spec.Images["registry.example.com/private"].PullSecrets
		diff := cmp.Diff([]appsv1alpha1.ReferenceObject{{Namespace: imagepulljob.DaemonConfigNamespace, Name: copyName}}, got)
		return framework.Want(diff == "", diff)
	})

	framework.Delete(t, env.Client, job)
	framework.WaitGone(t, env.Client, client.ObjectKeyFromObject(job), &appsv1alpha1.ImagePullJob{}, framework.Medium, "job gone")
	framework.Eventually(t, framework.Medium, "copy deleted", func(ctx context.Context) error {
		copies, err := secretCopies(ctx, src.UID)
		if err != nil {
			return err
		}
		return framework.Want(len(copies) == 0, fmt.Sprintf("%d copies", len(copies)))
	})
}

// TestChangedPullSecretIsCopiedAgain checks a running job's copy of its pull secret follows the
// source Secret's data when only the Secret changes: nothing else requeues the job.
func TestChangedPullSecretIsCopiedAgain(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pull-", nil)
	src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cred"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"registry.example.com":{"auth":"dTpw"}}}`)}}
	framework.CreateForTest(t, env.Client, src)
	job := pullJob(ns, "rotating", "registry.example.com/private:v2", onNodes("node-1"), func(j *appsv1alpha1.ImagePullJob) {
		j.Spec.PullSecrets = []string{"cred"}
	})
	framework.CreateForTest(t, env.Client, job)
	copyHolds := func(want map[string][]byte) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			copies, err := secretCopies(ctx, src.UID)
			if err != nil {
				return err
			}
			if len(copies) != 1 {
				return fmt.Errorf("%d copies", len(copies))
			}
			diff := cmp.Diff(want, copies[0].Data)
			return framework.Want(diff == "", diff)
		}
	}
	framework.Eventually(t, framework.Medium, "the copy holds the secret's data", copyHolds(src.Data))

	rotated := map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"registry.example.com":{"auth":"dTpuZXc="}}}`)}
	patch := client.MergeFrom(src.DeepCopy())
	src.Data = rotated
	if err := env.Client.Patch(context.Background(), src, patch); err != nil {
		t.Fatalf("rotate the secret: %v", err)
	}
	framework.Eventually(t, framework.Medium, "the copy holds the rotated data", copyHolds(rotated))
}

// TestSharedSecretCopyLivesWhileAJobUsesIt checks two jobs share one copy of the same secret,
// and the copy outlives the first job's deletion but not the second's.
func TestSharedSecretCopyLivesWhileAJobUsesIt(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pull-", nil)
	ctx := context.Background()
	src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shared"}, Data: map[string][]byte{"k": []byte("v")}}
	framework.CreateForTest(t, env.Client, src)
	never := func(j *appsv1alpha1.ImagePullJob) {
		j.Spec.PullSecrets = []string{"shared"}
		j.Spec.CompletionPolicy.Type = appsv1alpha1.Never
	}
	first := pullJob(ns, "first", "registry.example.com/one:v1", onNodes("node-1"), never)
	second := pullJob(ns, "second", "registry.example.com/two:v1", onNodes("node-1"), never)
	framework.CreateForTest(t, env.Client, first)
	framework.Eventually(t, framework.Medium, "first job's copy", func(ctx context.Context) error {
		copies, err := secretCopies(ctx, src.UID)
		return framework.Want(err == nil && len(copies) == 1, fmt.Sprintf("%d copies, %v", len(copies), err))
	})
	framework.CreateForTest(t, env.Client, second)
	framework.Eventually(t, framework.Medium, "one copy referenced by both jobs", func(ctx context.Context) error {
		copies, err := secretCopies(ctx, src.UID)
		if err != nil || len(copies) != 1 {
			return fmt.Errorf("%d copies, %v", len(copies), err)
		}
		got := copies[0].Annotations[imagepulljob.ReferencesAnnotation]
		return framework.Want(got == ns+"/first,"+ns+"/second", got)
	})
	if err := env.Client.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, framework.Medium, "copy kept for the second job", func(ctx context.Context) error {
		copies, err := secretCopies(ctx, src.UID)
		if err != nil || len(copies) != 1 {
			return fmt.Errorf("%d copies, %v", len(copies), err)
		}
		got := copies[0].Annotations[imagepulljob.ReferencesAnnotation]
		return framework.Want(got == ns+"/second", got)
	})
	if err := env.Client.Delete(ctx, second); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, framework.Medium, "copy deleted with the last job", func(ctx context.Context) error {
		copies, err := secretCopies(ctx, src.UID)
		return framework.Want(err == nil && len(copies) == 0, fmt.Sprintf("%d copies, %v", len(copies), err))
	})
}

// TestImageListPullJobRunsOneJobPerImage checks an ImageListPullJob makes one ImagePullJob per
// image with its template, and aggregates their results once the daemon reports them.
func TestImageListPullJobRunsOneJobPerImage(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "pull-", nil)
	images := []string{"registry.example.com/list-a:v1", "registry.example.com/list-b:v1"}
	list := &appsv1alpha1.ImageListPullJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "list"},
		Spec: appsv1alpha1.ImageListPullJobSpec{Images: images}}
	list.Spec.Selector = &appsv1alpha1.ImagePullJobNodeSelector{Names: []string{"node-3", "node-4"}}
	list.Spec.Parallelism = ptr.To(intstr.FromInt32(2))
	list.Spec.CompletionPolicy.Type = appsv1alpha1.Always
	framework.CreateForTest(t, env.Client, list)

	children := map[string]*appsv1alpha1.ImagePullJob{}
	framework.Eventually(t, framework.Medium, "one ImagePullJob per image, owned by the list", func(ctx context.Context) error {
		jobs := &appsv1alpha1.ImagePullJobList{}
		if err := env.Client.List(ctx, jobs, client.InNamespace(ns)); err != nil {
			return err
		}
		clear(children)
		var got []string
		for i := range jobs.Items {
			j := &jobs.Items[i]
			if ref := metav1.GetControllerOf(j); ref != nil && ref.UID == list.UID && ref.Kind == "ImageListPullJob" {
				children[j.Spec.Image] = j
				got = append(got, j.Spec.Image)
			}
		}
		sort.Strings(got)
		diff := cmp.Diff(images, got)
		return framework.Want(diff == "", diff)
	})
	for image, c := range children {
		if diff := cmp.Diff(list.Spec.ImagePullJobTemplate, c.Spec.ImagePullJobTemplate); diff != "" {
			t.Errorf("child for %s: template (-want +got)\n%s", image, diff)
		}
	}

	// Daemon: list-a succeeds everywhere; list-b fails on node-4.
	results := map[string]map[string]appsv1alpha1.ImagePullPhase{
		images[0]: {"node-3": appsv1alpha1.ImagePhaseSucceeded, "node-4": appsv1alpha1.ImagePhaseSucceeded},
		images[1]: {"node-3": appsv1alpha1.ImagePhaseSucceeded, "node-4": appsv1alpha1.ImagePhaseFailed},
	}
	for _, image := range images {
		uid := children[image].UID
		framework.Eventually(t, framework.Medium, "tags of "+image+" on both nodes", func(ctx context.Context) error {
			states, err := tagStates(ctx, uid, image)
			if err != nil {
				return err
			}
			diff := cmp.Diff([]string{"node-3", "node-4"}, writtenNodes(states))
			return framework.Want(diff == "", diff)
		})
		for node, phase := range results[image] {
			report(t, node, image, phase, "")
		}
	}

	failedChild := children[images[1]].Name
	framework.Eventually(t, framework.Medium, "list completed with one succeeded and one failed image", func(ctx context.Context) error {
		got := &appsv1alpha1.ImageListPullJob{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: list.Name}, got); err != nil {
			return err
		}
		want := appsv1alpha1.ImageListPullJobStatus{Desired: 2, Completed: 2, Succeeded: 1,
			FailedImageStatuses: []*appsv1alpha1.FailedImageStatus{{ImagePullJob: failedChild, Name: images[1],
				Message: fmt.Sprintf("Please check for details which nodes failed by 'kubectl get ImagePullJob %s'.", failedChild)}}}
		diff := cmp.Diff(want, got.Status, ignoreTimes)
		return framework.Want(diff == "" && got.Status.CompletionTime != nil && got.Status.StartTime != nil, diff)
	})
}
