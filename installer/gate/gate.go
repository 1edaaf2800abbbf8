package gate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// listPageSize keeps each list call small on clusters with many objects.
const listPageSize = 500

// userKind is one kind users create, with the facts Describe needs.
type userKind struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
}

func userKinds() []userKind {
	apps := func(version, resource, kind string, namespaced bool) userKind {
		return userKind{gvr: schema.GroupVersionResource{Group: "apps.kruise.io", Version: version, Resource: resource}, kind: kind, namespaced: namespaced}
	}
	return []userKind{
		apps("v1alpha1", "clonesets", "CloneSet", true),
		// Both StatefulSet versions share one storage; Remaining counts the first one served.
		apps("v1beta1", "statefulsets", "StatefulSet", true),
		apps("v1alpha1", "statefulsets", "StatefulSet", true),
		apps("v1alpha1", "daemonsets", "DaemonSet", true),
		apps("v1alpha1", "sidecarsets", "SidecarSet", false),
		apps("v1alpha1", "uniteddeployments", "UnitedDeployment", true),
		apps("v1alpha1", "workloadspreads", "WorkloadSpread", true),
		apps("v1alpha1", "imagepulljobs", "ImagePullJob", true),
		apps("v1alpha1", "imagelistpulljobs", "ImageListPullJob", true),
		apps("v1alpha1", "containerrecreaterequests", "ContainerRecreateRequest", true),
		apps("v1alpha1", "broadcastjobs", "BroadcastJob", true),
		apps("v1alpha1", "advancedcronjobs", "AdvancedCronJob", true),
		apps("v1alpha1", "resourcedistributions", "ResourceDistribution", false),
		apps("v1alpha1", "persistentpodstates", "PersistentPodState", true),
		apps("v1alpha1", "podprobemarkers", "PodProbeMarker", true),
		{gvr: schema.GroupVersionResource{Group: "policy.kruise.io", Version: "v1alpha1", Resource: "podunavailablebudgets"}, kind: "PodUnavailableBudget", namespaced: true},
	}
}

// UserKinds lists every user-created kind the add-on serves, StatefulSet under both versions.
// NodeImage and NodePodProbe are absent on purpose: the manager makes them per node, and they go
// with their nodes, not with the user.
func UserKinds() []schema.GroupVersionResource {
	ks := userKinds()
	out := make([]schema.GroupVersionResource, 0, len(ks))
	for _, k := range ks {
		out = append(out, k.gvr)
	}
	return out
}

// KindCount is how many objects of one kind remain.
type KindCount struct {
	// Kind is the API kind, e.g. CloneSet.
	Kind string `json:"kind"`
	// Resource is the resource that was listed.
	Resource schema.GroupVersionResource `json:"resource"`
	// Namespaced is false for cluster-scoped kinds such as SidecarSet.
	Namespaced bool `json:"namespaced"`
	// Count is the number of objects, at least 1.
	Count int `json:"count"`
	// Namespaces holds the namespaces the objects are in, sorted; empty for cluster-scoped kinds.
	Namespaces []string `json:"namespaces,omitempty"`
}

// Remaining lists every user kind and returns those with objects left, in UserKinds order. A kind
// whose resource is not served (its CRD is gone) counts as none.
func Remaining(ctx context.Context, c dynamic.Interface) ([]KindCount, error) {
	counted := map[schema.GroupResource]bool{}
	var out []KindCount
	for _, k := range userKinds() {
		gr := k.gvr.GroupResource()
		if counted[gr] {
			continue
		}
		kc, served, err := count(ctx, c, k)
		if err != nil {
			return nil, err
		}
		if !served {
			continue
		}
		counted[gr] = true
		if kc.Count > 0 {
			out = append(out, kc)
		}
	}
	return out, nil
}

func count(ctx context.Context, c dynamic.Interface, k userKind) (KindCount, bool, error) {
	kc := KindCount{Kind: k.kind, Resource: k.gvr, Namespaced: k.namespaced}
	namespaces := map[string]bool{}
	opts := metav1.ListOptions{Limit: listPageSize}
	for {
		list, err := c.Resource(k.gvr).List(ctx, opts)
		if apierrors.IsNotFound(err) || isNotServed(err) {
			return kc, false, nil
		}
		if err != nil {
			return kc, false, fmt.Errorf("list %s: %w", k.gvr.GroupResource(), err)
		}
		for _, item := range list.Items {
			kc.Count++
			if ns := item.GetNamespace(); ns != "" {
				namespaces[ns] = true
			}
		}
		if list.GetContinue() == "" {
			break
		}
		opts.Continue = list.GetContinue()
	}
	for ns := range namespaces {
		kc.Namespaces = append(kc.Namespaces, ns)
	}
	sort.Strings(kc.Namespaces)
	return kc, true, nil
}

// isNotServed reports the discovery-style errors an apiserver returns for a version it no longer
// serves.
func isNotServed(err error) bool {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return se.Status().Reason == metav1.StatusReasonNotFound
	}
	return false
}

// Describe says which objects remain and how to remove them; it returns "" for none.
func Describe(remaining []KindCount) string {
	if len(remaining) == 0 {
		return ""
	}
	var b strings.Builder
	total := 0
	for _, kc := range remaining {
		total += kc.Count
	}
	fmt.Fprintf(&b, "%d custom resource(s) of the add-on remain; delete them (or let their owners do it) before uninstalling:\n", total)
	for _, kc := range remaining {
		where := "cluster-scoped"
		if kc.Namespaced {
			where = "in namespace(s) " + strings.Join(kc.Namespaces, ", ")
		}
		fmt.Fprintf(&b, "  %s: %d %s\n", kc.Kind, kc.Count, where)
	}
	b.WriteString("to clean up:\n")
	for _, kc := range remaining {
		res := kc.Resource.Resource + "." + kc.Resource.Group
		if kc.Namespaced {
			fmt.Fprintf(&b, "  kubectl delete %s --all --all-namespaces\n", res)
		} else {
			fmt.Fprintf(&b, "  kubectl delete %s --all\n", res)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// RemainingError is returned by Check and RunInCluster when user objects remain.
type RemainingError struct {
	Remaining []KindCount
}

func (e *RemainingError) Error() string { return Describe(e.Remaining) }

// Check returns a *RemainingError when objects remain.
func Check(ctx context.Context, c dynamic.Interface) ([]KindCount, error) {
	remaining, err := Remaining(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(remaining) > 0 {
		return remaining, &RemainingError{Remaining: remaining}
	}
	return nil, nil
}

// RunInCluster runs Check with the pod's service account, for `kruise-manager uninstall-check`.
func RunInCluster(ctx context.Context) error {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return fmt.Errorf("in-cluster config: %w", err)
	}
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	_, err = Check(ctx, c)
	return err
}
