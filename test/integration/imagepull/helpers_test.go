package imagepull

import (
	"context"
	"fmt"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/imagepulljob"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// pullJob is an ImagePullJob with completion policy Always and the given mutations.
func pullJob(ns, name, image string, mut ...func(*appsv1alpha1.ImagePullJob)) *appsv1alpha1.ImagePullJob {
	j := &appsv1alpha1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1alpha1.ImagePullJobSpec{Image: image}}
	j.Spec.CompletionPolicy.Type = appsv1alpha1.Always
	for _, m := range mut {
		m(j)
	}
	return j
}

func onNodes(names ...string) func(*appsv1alpha1.ImagePullJob) {
	return func(j *appsv1alpha1.ImagePullJob) {
		j.Spec.Selector = &appsv1alpha1.ImagePullJobNodeSelector{Names: names}
	}
}

func getJob(ctx context.Context, ns, name string) (*appsv1alpha1.ImagePullJob, error) {
	j := &appsv1alpha1.ImagePullJob{}
	return j, env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, j)
}

// tagState is one NodeImage's view of a job's tag.
type tagState struct {
	// written: the spec holds the tag with the job among its owners.
	written bool
	version int64
	// phase is what the daemon reported for the spec's version; empty when nothing yet.
	phase appsv1alpha1.ImagePullPhase
}

func stateOf(ni *appsv1alpha1.NodeImage, uid types.UID, image string) tagState {
	name, tag, err := imagepulljob.SplitImage(image)
	if err != nil {
		return tagState{}
	}
	var s tagState
	for _, t := range ni.Spec.Images[name].Tags {
		if t.Tag != tag {
			continue
		}
		for _, ref := range t.OwnerReferences {
			if ref.UID == uid {
				s.written, s.version = true, t.Version
			}
		}
	}
	for _, ts := range ni.Status.ImageStatuses[name].Tags {
		if s.written && ts.Tag == tag && ts.Version == s.version {
			s.phase = ts.Phase
		}
	}
	return s
}

// tagStates reads every NodeImage's view of the job's tag, by node.
func tagStates(ctx context.Context, uid types.UID, image string) (map[string]tagState, error) {
	list := &appsv1alpha1.NodeImageList{}
	if err := env.Client.List(ctx, list); err != nil {
		return nil, err
	}
	out := map[string]tagState{}
	for i := range list.Items {
		out[list.Items[i].Name] = stateOf(&list.Items[i], uid, image)
	}
	return out, nil
}

// waitTagWritten waits until node's NodeImage holds the job's tag of image.
func waitTagWritten(t *testing.T, job *appsv1alpha1.ImagePullJob, image, node string) {
	t.Helper()
	framework.Eventually(t, framework.Medium, "tag written on "+node, func(ctx context.Context) error {
		states, err := tagStates(ctx, job.UID, image)
		if err != nil {
			return err
		}
		return framework.Want(states[node].written, fmt.Sprintf("written on %v", writtenNodes(states)))
	})
}

// writtenNodes are the nodes whose NodeImage holds the job's tag, sorted.
func writtenNodes(states map[string]tagState) []string {
	var out []string
	for n, s := range states {
		if s.written {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// activeNodes are the nodes holding the job's tag without a final phase.
func activeNodes(states map[string]tagState) []string {
	var out []string
	for n, s := range states {
		if s.written && s.phase != appsv1alpha1.ImagePhaseSucceeded && s.phase != appsv1alpha1.ImagePhaseFailed {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// report plays kruise-daemon on node: it writes phase for the spec's version of image's tag
// into the NodeImage status.
func report(t *testing.T, node, image string, phase appsv1alpha1.ImagePullPhase, message string) {
	t.Helper()
	name, tag, err := imagepulljob.SplitImage(image)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ni := &appsv1alpha1.NodeImage{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: node}, ni); err != nil {
			return err
		}
		var version int64 = -1
		for _, ts := range ni.Spec.Images[name].Tags {
			if ts.Tag == tag {
				version = ts.Version
			}
		}
		if version < 0 {
			return fmt.Errorf("NodeImage %s has no %s in its spec", node, image)
		}
		now := metav1.Now()
		st := appsv1alpha1.ImageTagStatus{Tag: tag, Phase: phase, Version: version, StartTime: &now, Message: message}
		if phase == appsv1alpha1.ImagePhaseSucceeded || phase == appsv1alpha1.ImagePhaseFailed {
			st.CompletionTime = &now
			st.Progress = 100
		}
		if ni.Status.ImageStatuses == nil {
			ni.Status.ImageStatuses = map[string]appsv1alpha1.ImageStatus{}
		}
		img := ni.Status.ImageStatuses[name]
		replaced := false
		for i := range img.Tags {
			if img.Tags[i].Tag == tag {
				img.Tags[i], replaced = st, true
			}
		}
		if !replaced {
			img.Tags = append(img.Tags, st)
		}
		ni.Status.ImageStatuses[name] = img
		return env.Client.Status().Update(ctx, ni)
	})
	if err != nil {
		t.Fatalf("report %s %s on %s: %v", image, phase, node, err)
	}
}

// nodesOfPool are the simulated nodes labelled pool=p, sorted.
func nodesOfPool(p string) []string {
	var out []string
	for n, pool := range poolOf {
		if pool == p {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// secretCopies lists the copies in the daemon config namespace made from the secret uid.
func secretCopies(ctx context.Context, uid types.UID) ([]corev1.Secret, error) {
	list := &corev1.SecretList{}
	err := env.Client.List(ctx, list, client.InNamespace(imagepulljob.DaemonConfigNamespace),
		client.MatchingLabels{imagepulljob.SourceUIDLabel: string(uid)})
	return list.Items, err
}
