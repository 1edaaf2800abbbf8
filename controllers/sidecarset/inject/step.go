package inject

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podadmission"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// NamespaceIndex is the cache index of SidecarSets by the namespace their pods can be in:
// spec.namespace, or AllNamespaces for a SidecarSet that can select pods of any namespace
// (none set, or a namespaceSelector). A pod's step reads only the SidecarSets under its own
// namespace and under AllNamespaces, so its cost follows the SidecarSets that can match it, not
// every SidecarSet in the cluster.
const NamespaceIndex = "sidecarset.spec.namespace"

// AllNamespaces is the NamespaceIndex value of SidecarSets not bound to one namespace.
const AllNamespaces = "*"

// namespaceKeys is the NamespaceIndex function.
func namespaceKeys(o client.Object) []string {
	s, ok := o.(*appsv1alpha1.SidecarSet)
	if !ok {
		return nil
	}
	if s.Spec.Namespace != "" {
		return []string{s.Spec.Namespace}
	}
	return []string{AllNamespaces}
}

// IndexSidecarSets registers NamespaceIndex with the manager's cache. Both the pod step and the
// controller use it; registering it twice is not an error.
func IndexSidecarSets(ctx context.Context, mgr ctrl.Manager) error {
	err := mgr.GetFieldIndexer().IndexField(ctx, &appsv1alpha1.SidecarSet{}, NamespaceIndex, namespaceKeys)
	if err != nil && !strings.Contains(err.Error(), "conflict") {
		return fmt.Errorf("index sidecarsets by namespace: %w", err)
	}
	return nil
}

// Candidates returns the SidecarSets that can select pods of namespace ns, read from the
// cache without copies: callers must not change them.
func Candidates(ctx context.Context, r client.Reader, ns string) ([]*appsv1alpha1.SidecarSet, error) {
	var out []*appsv1alpha1.SidecarSet
	for _, key := range []string{ns, AllNamespaces} {
		var list appsv1alpha1.SidecarSetList
		if err := r.List(ctx, &list, client.MatchingFields{NamespaceIndex: key}, client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("list sidecarsets for namespace %q: %w", key, err)
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// Step is the SidecarSet step of /mutate-pod: it injects the sidecars of every SidecarSet
// that selects a pod being created.
type Step struct {
	reader    client.Reader
	namespace string
	clock     clock.Clock
	roll      func() float64
	// selectors keeps the SidecarSets' selectors parsed between pods.
	selectors podadmission.Selectors
	// sidecarSets holds the cache's SidecarSets under their NamespaceIndex values, read without
	// a List per pod; nil, or not yet synced, means the step lists the cache.
	sidecarSets *podadmission.Snapshot[*appsv1alpha1.SidecarSet]
}

// NewStep returns the step reading SidecarSets, namespaces and ControllerRevisions (kept in
// revisionNamespace) through reader, which must carry NamespaceIndex.
func NewStep(reader client.Reader, revisionNamespace string, clk clock.Clock) *Step {
	return &Step{reader: reader, namespace: revisionNamespace, clock: clk, roll: rand.Float64}
}

// StepFactory builds the step from the manager's cache, registering NamespaceIndex.
func StepFactory(mgr ctrl.Manager, d setup.Deps) podadmission.Step {
	if err := IndexSidecarSets(context.Background(), mgr); err != nil {
		// The cache refuses a new index only once started, which setup precedes.
		ctrl.Log.Error(err, "SidecarSet injection is off")
		return nil
	}
	s := NewStep(mgr.GetCache(), d.ManagerNamespace, d.Clock)
	snap, err := podadmission.WatchSnapshot(context.Background(), mgr.GetCache(), &appsv1alpha1.SidecarSet{},
		func(set *appsv1alpha1.SidecarSet) []string { return namespaceKeys(set) })
	if err != nil {
		ctrl.Log.Error(err, "SidecarSet injection lists the cache for every pod")
		return s
	}
	s.sidecarSets = snap
	return s
}

// candidates returns the SidecarSets that can select pods of namespace ns, from the snapshot
// once it has synced, else listed from the cache. They are shared: callers must not change them.
func (s *Step) candidates(ctx context.Context, ns string) ([]*appsv1alpha1.SidecarSet, error) {
	if s.sidecarSets != nil {
		here, ok := s.sidecarSets.Get(ns)
		all, allOK := s.sidecarSets.Get(AllNamespaces)
		if ok && allOK {
			return slices.Concat(here, all), nil
		}
	}
	return Candidates(ctx, s.reader, ns)
}

// Name names the step.
func (s *Step) Name() string { return "sidecarset" }

// Mutate injects the sidecars of the SidecarSets that select the pod and whose injection is
// not paused.
func (s *Step) Mutate(ctx context.Context, _ admission.Request, pod *corev1.Pod) (bool, error) {
	if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false, nil
	}
	ns := pod.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	candidates, err := s.candidates(ctx, ns)
	if err != nil {
		return false, err
	}
	var nsLabels labels.Set
	nsRead := false
	var chosen []*appsv1alpha1.SidecarSet
	for _, set := range candidates {
		if set.Spec.InjectionStrategy.Paused {
			continue
		}
		if set.Spec.NamespaceSelector != nil && !nsRead {
			nsLabels, err = s.namespaceLabels(ctx, ns)
			if err != nil {
				return false, err
			}
			nsRead = true
		}
		if !Matches(pod, set, nsLabels, &s.selectors) {
			continue
		}
		pick, err := s.revisionFor(ctx, set, pod)
		if err != nil {
			return false, err
		}
		chosen = append(chosen, pick)
	}
	if len(chosen) == 0 {
		return false, nil
	}
	ctrl.LoggerFrom(ctx).V(4).Info("Injecting sidecars", "pod", klog.KObj(pod), "sidecarSets", len(chosen))
	return Inject(pod, chosen, metav1.NewTime(s.clock.Now()))
}

func (s *Step) namespaceLabels(ctx context.Context, ns string) (labels.Set, error) {
	var n corev1.Namespace
	if err := s.reader.Get(ctx, client.ObjectKey{Name: ns}, &n); err != nil {
		return nil, fmt.Errorf("get namespace %s: %w", ns, err)
	}
	return n.Labels, nil
}

// revisionFor returns the revision of set to inject into pod: the latest unless
// injectionStrategy.revision pins one.
func (s *Step) revisionFor(ctx context.Context, set *appsv1alpha1.SidecarSet, pod *corev1.Pod) (*appsv1alpha1.SidecarSet, error) {
	if set.Spec.InjectionStrategy.Revision == nil {
		return set, nil
	}
	var list appsv1.ControllerRevisionList
	if err := s.reader.List(ctx, &list, client.InNamespace(s.namespace), client.MatchingLabels{RevisionNameLabel: set.Name}); err != nil {
		return nil, fmt.Errorf("list revisions of sidecarset %s: %w", set.Name, err)
	}
	sorted := make([]*appsv1.ControllerRevision, 0, len(list.Items))
	for i := range list.Items {
		if ref := metav1.GetControllerOf(&list.Items[i]); ref != nil && ref.UID == set.UID {
			sorted = append(sorted, &list.Items[i])
		}
	}
	revision.Sort(sorted)
	rev := FindPinned(set, sorted)
	if rev == nil {
		ctrl.LoggerFrom(ctx).Info("Pinned SidecarSet revision not found, injecting the latest", "sidecarSet", klog.KObj(set))
		return set, nil
	}
	pinned, err := Restore(set, rev)
	if err != nil {
		return nil, fmt.Errorf("sidecarset %s: %w", set.Name, err)
	}
	return ChooseRevision(set, pinned, pod.Labels, s.roll()), nil
}
