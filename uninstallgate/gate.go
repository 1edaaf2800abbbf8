package uninstallgate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"encoding/json"

	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kruise-addon/kruise-addon/apis/kinds"
)

// listPageSize keeps each list call small on clusters with many objects.
const listPageSize = 500

// UserKinds lists the resources of every user-created kind the add-on serves, StatefulSet under
// both its versions, from apis/kinds. NodeImage and NodePodProbe are absent on purpose: the
// manager makes them per node, and they go with their nodes, not with the user.
func UserKinds() []schema.GroupVersionResource {
	var out []schema.GroupVersionResource
	for _, k := range kinds.UserCreated() {
		out = append(out, k.GVRs()...)
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
	// Finalizers are the manager's finalizers on objects of the kind (apis/kinds): a deleted
	// object waits for a manager to remove them.
	Finalizers []string `json:"finalizers,omitempty"`
	// Held counts the objects already being deleted that still carry one of Finalizers.
	Held int `json:"held,omitempty"`
}

// Remaining lists every user kind and returns those with objects left, in UserKinds order. A kind
// whose resource is not served (its CRD is gone) counts as none.
func Remaining(ctx context.Context, c dynamic.Interface) ([]KindCount, error) {
	counted := map[schema.GroupResource]bool{}
	var out []KindCount
	for _, k := range kinds.UserCreated() {
		// A kind served at several versions is counted once, at the first version served
		// (storage first): its versions share one storage.
		for _, gvr := range k.GVRs() {
			if counted[gvr.GroupResource()] {
				continue
			}
			kc, served, err := count(ctx, c, k, gvr)
			if err != nil {
				return nil, err
			}
			if !served {
				continue
			}
			counted[gvr.GroupResource()] = true
			if kc.Count > 0 {
				out = append(out, kc)
			}
		}
	}
	return out, nil
}

func count(ctx context.Context, c dynamic.Interface, k kinds.Kind, gvr schema.GroupVersionResource) (KindCount, bool, error) {
	kc := KindCount{Kind: k.Kind, Resource: gvr, Namespaced: k.Namespaced, Finalizers: k.Finalizers}
	namespaces := map[string]bool{}
	opts := metav1.ListOptions{Limit: listPageSize}
	for {
		list, err := c.Resource(gvr).List(ctx, opts)
		if apierrors.IsNotFound(err) || isNotServed(err) {
			return kc, false, nil
		}
		if err != nil {
			return kc, false, fmt.Errorf("list %s: %w", gvr.GroupResource(), err)
		}
		for _, item := range list.Items {
			kc.Count++
			if item.GetDeletionTimestamp() != nil && slices.ContainsFunc(item.GetFinalizers(), func(f string) bool { return slices.Contains(k.Finalizers, f) }) {
				kc.Held++
			}
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
		held := ""
		if kc.Held > 0 {
			held = fmt.Sprintf(" (%d being deleted, waiting for the manager to remove %s)", kc.Held, strings.Join(kc.Finalizers, ", "))
		}
		fmt.Fprintf(&b, "  %s: %d %s%s\n", kc.Kind, kc.Count, where, held)
	}
	b.WriteString("to clean up:\n")
	for _, kc := range remaining {
		b.WriteString("  kubectl delete " + kc.Resource.Resource + "." + kc.Resource.Group + " --all")
		if kc.Namespaced {
			b.WriteString(" --all-namespaces")
		}
		// A kind the manager finalizes is not waited for: while no manager runs, its objects
		// stay until the uninstall releases them (see installer).
		if len(kc.Finalizers) > 0 {
			b.WriteString(" --wait=false")
		}
		b.WriteString("\n")
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

// resourceJSON is a resource as the JSON of KindCount names it: group, version and resource.
type resourceJSON struct {
	Group    string `json:"group"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
}

// MarshalJSON writes Resource with lower-case field names, as the rest of the document has them.
func (kc KindCount) MarshalJSON() ([]byte, error) {
	type plain KindCount
	r := kc.Resource
	return json.Marshal(struct {
		plain
		Resource resourceJSON `json:"resource"`
	}{plain(kc), resourceJSON{Group: r.Group, Version: r.Version, Resource: r.Resource}})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (kc *KindCount) UnmarshalJSON(b []byte) error {
	type plain KindCount
	var v struct {
		plain
		Resource resourceJSON `json:"resource"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*kc = KindCount(v.plain)
	kc.Resource = schema.GroupVersionResource{Group: v.Resource.Group, Version: v.Resource.Version, Resource: v.Resource.Resource}
	return nil
}
