package cloneset

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podwrite"
	"github.com/kruise-addon/kruise-addon/controllers/internal/slowstart"
)

// Pod creation is bounded so that no CloneSet, however large its replicas, can hold the manager:
// a reconcile builds only the next batch of pods in memory, creates at most
// MaxCreatesPerReconcile of them and requeues for the rest, and between batches it looks at the
// CloneSet again and stops when it changed or went away (controllers/internal/slowstart).
const (
	// CreateBatchLimit is the largest batch of pods created at once (slowstart.BatchLimit).
	CreateBatchLimit = slowstart.BatchLimit
	// MaxCreatesPerReconcile is the most pods one reconcile creates (slowstart.MaxPerReconcile).
	MaxCreatesPerReconcile = slowstart.MaxPerReconcile
)

// Instance IDs are the random suffix of a pod's name and the value of its
// apps.kruise.io/cloneset-instance-id label.
const (
	// instanceIDLength is the length of an instance ID while the space of IDs is not crowded:
	// 27^5, about 14.3 million, IDs.
	instanceIDLength = 5
	// maxInstanceIDLength is the longest instance ID tried when shorter ones keep colliding:
	// 27^8, about 2.8e11, IDs, more than any namespace can hold pods.
	maxInstanceIDLength = 8
	// idAttempts is how many random IDs of one length are tried before a longer one is. With
	// half the space taken, sixteen collisions in a row happen once in 65,536 IDs.
	idAttempts = 16
)

// createRequeue is when a CloneSet that has pods left to create after this reconcile's share is
// looked at again, if no pod event brings it back sooner.
const createRequeue = time.Second

// maxIDLength is the longest instance ID whose pod and claim names stay valid names, at most
// maxInstanceIDLength; it is below instanceIDLength when even the shortest ID makes a name too
// long.
func maxIDLength(cs *appsv1alpha1.CloneSet) int {
	longest := len(cs.Name) + 1
	for _, vct := range cs.Spec.VolumeClaimTemplates {
		longest = max(longest, len(claimName(vct.Name, cs.Name, "")))
	}
	return min(maxInstanceIDLength, validation.DNS1123SubdomainMaxLength-longest)
}

// newInstanceID returns a random ID for a pod of the CloneSet called name that taken holds
// neither as an ID nor as a pod name (name-ID). It makes idAttempts tries at each length from instanceIDLength up to maxLength, so it
// ends however crowded the space is, and fails only when every try collided.
func newInstanceID(name string, maxLength int, taken map[string]bool, random func(int) string) (string, error) {
	prefix := name + "-"
	for length := instanceIDLength; length <= maxLength; length++ {
		for range idAttempts {
			id := random(length)
			if !taken[id] && !taken[prefix+id] {
				return id, nil
			}
		}
	}
	if maxLength < instanceIDLength {
		return "", fmt.Errorf("no instance ID fits: a pod or claim name of CloneSet %s would be longer than %d characters", name, validation.DNS1123SubdomainMaxLength)
	}
	return "", fmt.Errorf("no free instance ID for CloneSet %s: %d random IDs of each length from %d to %d characters were all in use",
		name, idAttempts, instanceIDLength, maxLength)
}

// instanceIDs hands out the instance IDs of new pods, a batch at a time: first the IDs whose
// claims wait for a pod (unless reuse is off), then new random ones that no pod, terminating pod
// or claim uses.
type instanceIDs struct {
	name      string
	maxLength int
	taken     map[string]bool
	free      []string
	// waiting counts instances whose pod is terminating and whose claims wait for it: their
	// replacement takes that ID, and so the volumes, once the old pod is gone.
	waiting int
	random  func(int) string
}

func newInstanceIDs(s *scope, random func(int) string) *instanceIDs {
	ids := &instanceIDs{name: s.cs.Name, maxLength: maxIDLength(s.cs), taken: map[string]bool{}, random: random}
	for _, p := range append(append([]*corev1.Pod{}, s.pods...), s.terminating...) {
		ids.taken[p.Labels[appsv1alpha1.CloneSetInstanceID]] = true
		ids.taken[p.Name] = true
	}
	for _, c := range s.claims {
		ids.taken[c.Labels[appsv1alpha1.CloneSetInstanceID]] = true
	}
	if s.cs.Spec.ScaleStrategy.DisablePVCReuse {
		return ids
	}
	ids.free = freeInstanceIDs(s)
	waiting := map[string]bool{}
	for _, p := range s.terminating {
		id := p.Labels[appsv1alpha1.CloneSetInstanceID]
		for _, c := range s.claims {
			if id != "" && c.Labels[appsv1alpha1.CloneSetInstanceID] == id {
				waiting[id] = true
			}
		}
	}
	ids.waiting = len(waiting)
	return ids
}

// held is how many of n new pods wait for a terminating pod to go, so that they can take its ID
// and volumes; the free IDs are used first.
func (ids *instanceIDs) held(n int) int {
	return max(0, min(ids.waiting, n-len(ids.free)))
}

// next returns n more IDs.
func (ids *instanceIDs) next(n int) ([]string, error) {
	out := make([]string, 0, n)
	for len(out) < n && len(ids.free) > 0 {
		out = append(out, ids.free[0])
		ids.free = ids.free[1:]
	}
	for len(out) < n {
		id, err := newInstanceID(ids.name, ids.maxLength, ids.taken, ids.random)
		if err != nil {
			return nil, err
		}
		ids.taken[id] = true
		out = append(out, id)
	}
	return out, nil
}

// createPods creates the pods the plan asks for in slow-start batches, building only the next
// batch's pods. Before each batch after the first it stops, without an error, when the
// reconcile's context is done or the cache shows the CloneSet changed, being deleted or gone:
// pods are never created for a spec nobody wants any more. It creates at most
// MaxCreatesPerReconcile pods; more says that some are left for a later reconcile.
func (r *Reconciler) createPods(ctx context.Context, s *scope, p plan) (more bool, err error) {
	log := ctrl.LoggerFrom(ctx)
	ids := newInstanceIDs(s, r.randomID)
	want := p.createCurrent + p.createUpdated
	if held := ids.held(want); held > 0 {
		log.V(2).Info("Waiting for terminating pods to go before their replacements reuse their volumes", "pods", held)
		want -= held
	}
	res, err := slowstart.Run(ctx, want, slowstart.Reread(r.Client, "CloneSet", s.cs),
		func(ctx context.Context, from, size int) error {
			batch, err := r.newBatch(s, ids, from, size, p.createCurrent)
			if err != nil {
				r.event(s.cs, corev1.EventTypeWarning, "FailedCreate", "failed to create pods: %v", err)
				return err
			}
			return r.createBatch(ctx, s, batch)
		})
	if err != nil {
		return false, err
	}
	if res.Stopped != "" {
		log.V(2).Info("Stopped creating pods", "reason", res.Stopped, "created", res.Created, "planned", want)
	}
	return res.More, nil
}

// newBatch builds the pods numbered from to from+n of this reconcile's creations; the first
// current of them are at the current revision, the rest at the update revision.
func (r *Reconciler) newBatch(s *scope, ids *instanceIDs, from, n, current int) ([]*corev1.Pod, error) {
	batchIDs, err := ids.next(n)
	if err != nil {
		return nil, err
	}
	pods := make([]*corev1.Pod, 0, n)
	for i, id := range batchIDs {
		rev := s.Update
		if from+i < current {
			rev = s.Current
		}
		pod, err := r.newPod(s, rev, id)
		if err != nil {
			return nil, err
		}
		pods = append(pods, pod)
	}
	return pods, nil
}

// createBatch creates one batch of pods, each after its claims, in parallel
// (podwrite.Writer.CreateBatch).
func (r *Reconciler) createBatch(ctx context.Context, s *scope, pods []*corev1.Pod) error {
	batch := make([]podwrite.Creation, len(pods))
	for i, pod := range pods {
		id := pod.Labels[appsv1alpha1.CloneSetInstanceID]
		batch[i] = podwrite.Creation{Pod: pod, What: "pod " + pod.Name, Before: func(ctx context.Context) error { return r.ensureClaims(ctx, s, id) }}
	}
	return r.writer(s).CreateBatch(ctx, batch, false)
}
