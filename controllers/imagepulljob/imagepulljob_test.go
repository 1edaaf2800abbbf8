package imagepulljob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func testJob(mut ...func(*appsv1alpha1.ImagePullJob)) *appsv1alpha1.ImagePullJob {
	j := &appsv1alpha1.ImagePullJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: types.UID("job-uid")},
		Spec:       appsv1alpha1.ImagePullJobSpec{Image: "registry.example.com/app:v1"},
	}
	j.Spec.CompletionPolicy.Type = appsv1alpha1.Always
	for _, m := range mut {
		m(j)
	}
	return j
}

func nodeImage(name string, labels map[string]string) appsv1alpha1.NodeImage {
	return appsv1alpha1.NodeImage{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func names(nis []*appsv1alpha1.NodeImage) []string {
	var out []string
	for _, ni := range nis {
		out = append(out, ni.Name)
	}
	return out
}

func podOn(name, node string, labels map[string]string, phase corev1.PodPhase) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: labels},
		Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
}

func TestSelectNodeImages(t *testing.T) {
	all := []appsv1alpha1.NodeImage{
		nodeImage("n3", map[string]string{"pool": "a"}),
		nodeImage("n1", map[string]string{"pool": "a"}),
		nodeImage("n2", map[string]string{"pool": "b"}),
	}
	pods := []corev1.Pod{
		podOn("p1", "n2", map[string]string{"app": "web"}, corev1.PodRunning),
		podOn("p2", "n2", map[string]string{"app": "web"}, corev1.PodRunning),
		podOn("p3", "n3", map[string]string{"app": "web"}, corev1.PodSucceeded),
		podOn("p4", "n1", map[string]string{"app": "db"}, corev1.PodRunning),
		podOn("p5", "", map[string]string{"app": "web"}, corev1.PodPending),
	}
	type tcase struct {
		job  *appsv1alpha1.ImagePullJob
		want []string
	}
	cases := map[string]tcase{
		"no selector pulls on every node, sorted by name": {job: testJob(), want: []string{"n1", "n2", "n3"}},
		"names pick those that exist": {job: testJob(func(j *appsv1alpha1.ImagePullJob) {
			j.Spec.Selector = &appsv1alpha1.ImagePullJobNodeSelector{Names: []string{"n2", "gone"}}
		}), want: []string{"n2"}},
		"a label selector matches the node labels copied to NodeImages": {job: testJob(func(j *appsv1alpha1.ImagePullJob) {
			j.Spec.Selector = &appsv1alpha1.ImagePullJobNodeSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "a"}}}
		}), want: []string{"n1", "n3"}},
		"a podSelector picks the nodes of active scheduled matching pods once each": {job: testJob(func(j *appsv1alpha1.ImagePullJob) {
			j.Spec.PodSelector = &appsv1alpha1.ImagePullJobPodSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
		}), want: []string{"n2"}},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		got, err := selectNodeImages(tc.job, all, pods)
		if err != nil {
			t.Fatal(err)
		}
		testkit.Diff(t, "names(got)", tc.want, names(got))
	})
}

func TestSyncWindow(t *testing.T) {
	type tcase struct {
		parallelism *intstr.IntOrString
		desired     int
		active      int
		notSynced   []string
		want        []string
	}
	cases := map[string]tcase{
		"unset parallelism syncs one node at a time":  {desired: 3, notSynced: []string{"a", "b", "c"}, want: []string{"a"}},
		"no room while as many nodes pull as allowed": {parallelism: ptr.To(intstr.FromInt32(1)), desired: 3, active: 1, notSynced: []string{"b", "c"}},
		"room is parallelism minus active":            {parallelism: ptr.To(intstr.FromInt32(3)), desired: 5, active: 1, notSynced: []string{"b", "c", "d"}, want: []string{"b", "c"}},
		"never more than what is left":                {parallelism: ptr.To(intstr.FromInt32(10)), desired: 2, notSynced: []string{"a"}, want: []string{"a"}},
		"a percentage is of desired, rounded up":      {parallelism: ptr.To(intstr.FromString("50%")), desired: 3, notSynced: []string{"a", "b", "c"}, want: []string{"a", "b"}},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		got := syncWindow(tc.parallelism, tc.desired, tc.active, tc.notSynced)
		testkit.Diff(t, "syncWindow", tc.want, got)
	})
}

// withTag is a NodeImage holding app:v1 owned by owner at version, with a status phase
// (empty: the daemon has not answered).
func withTag(name, owner string, version int64, reported int64, phase appsv1alpha1.ImagePullPhase) *appsv1alpha1.NodeImage {
	ni := nodeImage(name, nil)
	ni.Spec.Images = map[string]appsv1alpha1.ImageSpec{"registry.example.com/app": {Tags: []appsv1alpha1.ImageTagSpec{{
		Tag: "v1", Version: version, OwnerReferences: []corev1.ObjectReference{{UID: types.UID(owner)}}}}}}
	if phase != "" {
		ni.Status.ImageStatuses = map[string]appsv1alpha1.ImageStatus{"registry.example.com/app": {Tags: []appsv1alpha1.ImageTagStatus{{
			Tag: "v1", Version: reported, Phase: phase}}}}
	}
	return &ni
}

func TestNodeProgress(t *testing.T) {
	plain := nodeImage("fresh", nil)
	nis := []*appsv1alpha1.NodeImage{
		&plain,
		withTag("other-owner", "someone-else", 0, 0, appsv1alpha1.ImagePhaseSucceeded),
		withTag("unanswered", "job-uid", 0, 0, ""),
		withTag("old-version", "job-uid", 2, 1, appsv1alpha1.ImagePhaseSucceeded),
		withTag("pulling", "job-uid", 0, 0, appsv1alpha1.ImagePhasePulling),
		withTag("done", "job-uid", 1, 1, appsv1alpha1.ImagePhaseSucceeded),
		withTag("broken", "job-uid", 0, 0, appsv1alpha1.ImagePhaseFailed),
	}
	want := progress{
		notSynced: []string{"fresh", "other-owner"},
		pulling:   []string{"unanswered", "old-version", "pulling"},
		succeeded: []string{"done"},
		failed:    []string{"broken"},
	}
	got := nodeProgress(testJob(), "registry.example.com/app", "v1", nis, nil)
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(progress{})); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}

	t.Run("a NodeImage missing a secret copy is not synced", func(t *testing.T) {
		got := nodeProgress(testJob(), "registry.example.com/app", "v1", nis[5:6], []appsv1alpha1.ReferenceObject{{Namespace: DaemonConfigNamespace, Name: "s-x"}})
		if diff := cmp.Diff(progress{notSynced: []string{"done"}}, got, cmp.AllowUnexported(progress{})); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})
}

func TestComputeStatus(t *testing.T) {
	start := metav1.NewTime(t0)
	now := metav1.NewTime(t0.Add(10 * time.Second))
	started := func(j *appsv1alpha1.ImagePullJob) { j.Status.StartTime = &start }
	type tcase struct {
		job     *appsv1alpha1.ImagePullJob
		desired int
		p       progress
		want    appsv1alpha1.ImagePullJobStatus
	}
	cases := map[string]tcase{
		"a new job starts now and reports its progress": {
			job: testJob(), desired: 4, p: progress{notSynced: []string{"a", "b"}, pulling: []string{"c"}, succeeded: []string{"d"}},
			want: appsv1alpha1.ImagePullJobStatus{StartTime: &now, Desired: 4, Active: 1, Succeeded: 1, Message: "job is running, progress 25.0%"},
		},
		"every node finished completes an Always job with failed nodes listed sorted": {
			job: testJob(started), desired: 3, p: progress{succeeded: []string{"a"}, failed: []string{"c", "b"}},
			want: appsv1alpha1.ImagePullJobStatus{StartTime: &start, CompletionTime: &now, Desired: 3, Succeeded: 1, Failed: 2,
				FailedNodes: []string{"b", "c"}, Message: msgCompleted},
		},
		"a Never job does not complete": {
			job:     testJob(started, func(j *appsv1alpha1.ImagePullJob) { j.Spec.CompletionPolicy.Type = appsv1alpha1.Never }),
			desired: 1, p: progress{succeeded: []string{"a"}},
			want: appsv1alpha1.ImagePullJobStatus{StartTime: &start, Desired: 1, Succeeded: 1, Message: "job is running, progress 100.0%"},
		},
		"past activeDeadlineSeconds unfinished nodes fail and the job completes": {
			job:     testJob(started, func(j *appsv1alpha1.ImagePullJob) { j.Spec.CompletionPolicy.ActiveDeadlineSeconds = ptr.To[int64](10) }),
			desired: 3, p: progress{succeeded: []string{"a"}, pulling: []string{"c"}, notSynced: []string{"b"}},
			want: appsv1alpha1.ImagePullJobStatus{StartTime: &start, CompletionTime: &now, Desired: 3, Succeeded: 1, Failed: 2,
				FailedNodes: []string{"b", "c"}, Message: msgDeadline},
		},
		"before activeDeadlineSeconds the job runs on": {
			job:     testJob(started, func(j *appsv1alpha1.ImagePullJob) { j.Spec.CompletionPolicy.ActiveDeadlineSeconds = ptr.To[int64](11) }),
			desired: 2, p: progress{pulling: []string{"a"}, notSynced: []string{"b"}},
			want: appsv1alpha1.ImagePullJobStatus{StartTime: &start, Desired: 2, Active: 1, Message: "job is running, progress 0.0%"},
		},
		"a job selecting no node completes at once": {
			job: testJob(started), desired: 0,
			want: appsv1alpha1.ImagePullJobStatus{StartTime: &start, CompletionTime: &now, Message: msgCompleted},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		got := computeStatus(tc.job, tc.desired, tc.p, now.Time)
		testkit.Diff(t, "computeStatus", tc.want, got)
	})
}

func TestAddTag(t *testing.T) {
	now := metav1.NewTime(t0)
	job := testJob(func(j *appsv1alpha1.ImagePullJob) {
		j.Spec.PullPolicy = &appsv1alpha1.PullPolicy{TimeoutSeconds: ptr.To[int32](60), BackoffLimit: ptr.To[int32](2)}
		j.Spec.CompletionPolicy.TTLSecondsAfterFinished = ptr.To[int32](100)
	})
	policy := tagPullPolicy(job)
	secret := appsv1alpha1.ReferenceObject{Namespace: DaemonConfigNamespace, Name: "cred-abcde"}
	mine := ownerRef(job)
	other := corev1.ObjectReference{Kind: "ImagePullJob", Namespace: "ns", Name: "other", UID: "other-uid"}
	type tcase struct {
		ni          *appsv1alpha1.NodeImage
		wantChanged bool
		want        appsv1alpha1.ImageSpec
	}
	cases := map[string]tcase{
		"a new tag starts one past the version the daemon last reported": {
			ni: func() *appsv1alpha1.NodeImage {
				ni := nodeImage("n", nil)
				ni.Status.ImageStatuses = map[string]appsv1alpha1.ImageStatus{"registry.example.com/app": {Tags: []appsv1alpha1.ImageTagStatus{{Tag: "v1", Version: 4}}}}
				return &ni
			}(),
			wantChanged: true,
			want: appsv1alpha1.ImageSpec{PullSecrets: []appsv1alpha1.ReferenceObject{secret}, Tags: []appsv1alpha1.ImageTagSpec{{
				Tag: "v1", Version: 5, CreatedAt: &now, PullPolicy: policy, OwnerReferences: []corev1.ObjectReference{mine}}}},
		},
		"joining another job's tag bumps its version so the daemon pulls again": {
			ni: func() *appsv1alpha1.NodeImage {
				ni := nodeImage("n", nil)
				ni.Spec.Images = map[string]appsv1alpha1.ImageSpec{"registry.example.com/app": {PullSecrets: []appsv1alpha1.ReferenceObject{secret},
					Tags: []appsv1alpha1.ImageTagSpec{{Tag: "v0"}, {Tag: "v1", Version: 2, OwnerReferences: []corev1.ObjectReference{other}}}}}
				return &ni
			}(),
			wantChanged: true,
			want: appsv1alpha1.ImageSpec{PullSecrets: []appsv1alpha1.ReferenceObject{secret}, Tags: []appsv1alpha1.ImageTagSpec{{Tag: "v0"}, {
				Tag: "v1", Version: 3, CreatedAt: &now, PullPolicy: policy, OwnerReferences: []corev1.ObjectReference{other, mine}}}},
		},
		"a tag the job already owns is left alone": {
			ni: func() *appsv1alpha1.NodeImage {
				ni := nodeImage("n", nil)
				ni.Spec.Images = map[string]appsv1alpha1.ImageSpec{"registry.example.com/app": {PullSecrets: []appsv1alpha1.ReferenceObject{secret},
					Tags: []appsv1alpha1.ImageTagSpec{{Tag: "v1", Version: 1, OwnerReferences: []corev1.ObjectReference{mine}}}}}
				return &ni
			}(),
			want: appsv1alpha1.ImageSpec{PullSecrets: []appsv1alpha1.ReferenceObject{secret},
				Tags: []appsv1alpha1.ImageTagSpec{{Tag: "v1", Version: 1, OwnerReferences: []corev1.ObjectReference{mine}}}},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		changed := addTag(tc.ni, job, "registry.example.com/app", "v1", []appsv1alpha1.ReferenceObject{secret}, t0)
		if changed != tc.wantChanged {
			t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
		}
		testkit.Diff(t, "ni.Spec.Images[\"registry.example.com/app\"]", tc.want, tc.ni.Spec.Images["registry.example.com/app"])
	})
}

func TestTagPullPolicy(t *testing.T) {
	type tcase struct {
		job        *appsv1alpha1.ImagePullJob
		wantMinTTL int32
		wantMaxTTL int32
		wantADS    *int64
	}
	cases := map[string]tcase{
		"Always with a TTL keeps tags the TTL plus five to ten minutes": {
			job: testJob(func(j *appsv1alpha1.ImagePullJob) {
				j.Spec.CompletionPolicy.TTLSecondsAfterFinished = ptr.To[int32](100)
				j.Spec.CompletionPolicy.ActiveDeadlineSeconds = ptr.To[int64](50)
			}),
			wantMinTTL: 400, wantMaxTTL: 699, wantADS: ptr.To[int64](50),
		},
		"Always without TTL or deadline uses timeout times backoff": {
			job:        testJob(),
			wantMinTTL: 1800 + 300, wantMaxTTL: 1800 + 599,
		},
		"Never keeps tags about a day with a half-hour deadline per node": {
			job:        testJob(func(j *appsv1alpha1.ImagePullJob) { j.Spec.CompletionPolicy.Type = appsv1alpha1.Never }),
			wantMinTTL: 86400 - 600, wantMaxTTL: 86400 + 599, wantADS: ptr.To[int64](1800),
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		got := tagPullPolicy(tc.job)
		if ttl := *got.TTLSecondsAfterFinished; ttl < tc.wantMinTTL || ttl > tc.wantMaxTTL {
			t.Errorf("ttl %d not in [%d, %d]", ttl, tc.wantMinTTL, tc.wantMaxTTL)
		}
		testkit.Diff(t, "activeDeadlineSeconds", tc.wantADS, got.ActiveDeadlineSeconds)
		if diff := cmp.Diff(got, tagPullPolicy(tc.job)); diff != "" {
			t.Errorf("not stable across passes (-first +second)\n%s", diff)
		}
	})
}

func TestSplitImage(t *testing.T) {
	type tcase struct {
		ref      string
		wantName string
		wantTag  string
	}
	cases := map[string]tcase{
		"an official image drops the default registry and library/, tag defaults to latest": {ref: "nginx", wantName: "nginx", wantTag: "latest"},
		"a user image on the default registry keeps its user":                               {ref: "user/app:1.2", wantName: "user/app", wantTag: "1.2"},
		"another registry stays in the name, with its port":                                 {ref: "registry.example.com:5000/team/app:v1", wantName: "registry.example.com:5000/team/app", wantTag: "v1"},
		"a digest is the tag": {ref: "registry.example.com/app@sha256:0123456789012345678901234567890123456789012345678901234567890123",
			wantName: "registry.example.com/app", wantTag: "sha256:0123456789012345678901234567890123456789012345678901234567890123"},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		n, tag, err := SplitImage(tc.ref)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{tc.wantName, tc.wantTag}, []string{n, tag}); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})
}
