package uniteddeployment

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
)

// scope is what one reconcile reads before it decides anything.
type scope struct {
	ud *appsv1alpha1.UnitedDeployment
	// kind is the adapter of the template's kind.
	kind adapter
	// workloads are the subset workloads of that kind the UnitedDeployment controls, oldest
	// first; strays are its workloads of other kinds, left from an earlier template.
	workloads []subsetWorkload
	strays    []client.Object
	// pods are the pods the selector matches, by subset name.
	pods map[string][]*corev1.Pod
	// Tracked is every revision, sorted, with the current and update ones that matter now.
	revision.Tracked
}

// subsetWorkload is one subset workload and what it holds.
type subsetWorkload struct {
	subset string
	obj    client.Object
	state  workloadState
}

// readScope reads the UnitedDeployment's subset workloads, their pods and its revisions, and
// creates the update revision if the template is new.
func (r *Reconciler) readScope(ctx context.Context, ud *appsv1alpha1.UnitedDeployment) (*scope, error) {
	sel, err := metav1.LabelSelectorAsSelector(ud.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("read spec.selector: %w", err)
	}
	s := &scope{ud: ud, kind: adapterFor(ud.Spec.Template), pods: map[string][]*corev1.Pod{}}
	for _, a := range allAdapters() {
		list := a.newList()
		if err := r.client.List(ctx, list, client.InNamespace(ud.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return nil, fmt.Errorf("list %s subsets: %w", a.kind(), err)
		}
		for _, obj := range a.items(list) {
			if ref := metav1.GetControllerOf(obj); ref == nil || ref.UID != ud.UID || obj.GetDeletionTimestamp() != nil {
				continue
			}
			name := obj.GetLabels()[appsv1alpha1.SubSetNameLabelKey]
			if s.kind == nil || a.kind() != s.kind.kind() || name == "" {
				s.strays = append(s.strays, obj)
				continue
			}
			s.workloads = append(s.workloads, subsetWorkload{subset: name, obj: obj, state: a.read(obj)})
		}
	}
	sort.SliceStable(s.workloads, func(i, j int) bool {
		a, b := s.workloads[i].obj, s.workloads[j].obj
		ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
		if !ta.Equal(&tb) {
			return ta.Before(&tb)
		}
		return a.GetName() < b.GetName()
	})

	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, client.InNamespace(ud.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if name := p.Labels[appsv1alpha1.SubSetNameLabelKey]; name != "" {
			s.pods[name] = append(s.pods[name], p)
		}
	}
	// The update revision is found or created, and the current one found.
	s.Tracked, err = r.history.Track(ctx, revision.Workload{Parent: ud, GVK: controllerKind, Selector: ud.Spec.Selector.MatchLabels,
		Template: ud.Spec.Template, Labels: ud.Spec.Selector.MatchLabels, CurrentRevision: ud.Status.CurrentRevision}, ud.Status.CollisionCount)
	return s, err
}
