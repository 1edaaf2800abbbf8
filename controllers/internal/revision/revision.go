package revision

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// HashLabel is the label every revision carries with its hash, as the workload API expects.
const HashLabel = appsv1.ControllerRevisionHashLabelKey

// maxPrefix keeps a revision name, prefix + "-" + hash, within the 253 characters of a name.
const maxPrefix = 223

// Hash returns the hash of a revision's data, salted with collisionCount when it is set: FNV-32
// of the data followed by the count in decimal, as Kubernetes hashes a ControllerRevision, so a
// new revision is named as 1.8 names it. The hash is a short string safe in names and labels.
func Hash(data []byte, collisionCount *int32) string {
	h := fnv.New32()
	h.Write(data)
	if collisionCount != nil {
		h.Write([]byte(strconv.FormatInt(int64(*collisionCount), 10)))
	}
	return rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// Name is the name of the revision of parent with the given hash.
func Name(parent, hash string) string {
	if len(parent) > maxPrefix {
		parent = parent[:maxPrefix]
	}
	return parent + "-" + hash
}

// ShortHash returns the hash part of a revision name ("web-7c9f8" gives "7c9f8").
func ShortHash(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '-' {
			return name[i+1:]
		}
	}
	return name
}

// New builds revision number rev of parent holding data, labelled with labels and the hash.
func New(parent metav1.Object, gvk schema.GroupVersionKind, labels map[string]string, data []byte, rev int64, collisionCount *int32) *appsv1.ControllerRevision {
	hash := Hash(data, collisionCount)
	l := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		l[k] = v
	}
	l[HashLabel] = hash
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name:            Name(parent.GetName(), hash),
			Namespace:       parent.GetNamespace(),
			Labels:          l,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(parent, gvk)},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: rev,
	}
}

// Equal reports whether two revisions hold the same template.
func Equal(a, b *appsv1.ControllerRevision) bool {
	return bytes.Equal(a.Data.Raw, b.Data.Raw)
}

// FindEqual returns the revisions in history that hold the same template as want, newest last.
func FindEqual(history []*appsv1.ControllerRevision, want *appsv1.ControllerRevision) []*appsv1.ControllerRevision {
	var out []*appsv1.ControllerRevision
	for _, r := range history {
		if Equal(r, want) {
			out = append(out, r)
		}
	}
	return out
}

// Sort orders revisions by revision number, then creation time, then name, oldest first.
func Sort(revs []*appsv1.ControllerRevision) {
	sort.SliceStable(revs, func(i, j int) bool {
		a, b := revs[i], revs[j]
		if a.Revision != b.Revision {
			return a.Revision < b.Revision
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
}

// Next returns the revision number after the newest in a sorted history.
func Next(sorted []*appsv1.ControllerRevision) int64 {
	if len(sorted) == 0 {
		return 1
	}
	return sorted[len(sorted)-1].Revision + 1
}

// History reads and writes the revisions of one kind of parent.
type History struct {
	Client client.Client
	Reader client.Reader // the cache; defaults to Client
	Live   client.Reader // reads that must not lag our own writes; defaults to Client
}

// List returns the revisions in namespace owned by the parent with the given UID, sorted.
func (h History) List(ctx context.Context, namespace string, selector map[string]string, owner types.UID) ([]*appsv1.ControllerRevision, error) {
	r := h.Reader
	if r == nil {
		r = h.Client
	}
	var list appsv1.ControllerRevisionList
	if err := r.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels(selector)); err != nil {
		return nil, fmt.Errorf("list revisions: %w", err)
	}
	var out []*appsv1.ControllerRevision
	for i := range list.Items {
		if ref := metav1.GetControllerOf(&list.Items[i]); ref != nil && ref.UID == owner {
			out = append(out, &list.Items[i])
		}
	}
	Sort(out)
	return out, nil
}

// Create stores rev. When a revision of that name exists with the same data, it is returned
// instead; when one exists with other data (a hash collision), collisionCount is stepped and the
// revision renamed until a free name is found. The caller persists the new collisionCount.
func (h History) Create(ctx context.Context, parent metav1.Object, gvk schema.GroupVersionKind, rev *appsv1.ControllerRevision, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	if collisionCount == nil {
		return nil, fmt.Errorf("create revision: collisionCount must not be nil")
	}
	for {
		hash := Hash(rev.Data.Raw, collisionCount)
		c := rev.DeepCopy()
		c.Name = Name(parent.GetName(), hash)
		c.Labels[HashLabel] = hash
		err := h.Client.Create(ctx, c)
		if err == nil {
			return c, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create revision %s: %w", c.Name, err)
		}
		live := h.Live
		if live == nil {
			live = h.Client
		}
		var existing appsv1.ControllerRevision
		if err := live.Get(ctx, client.ObjectKeyFromObject(c), &existing); err != nil {
			return nil, fmt.Errorf("get existing revision %s: %w", c.Name, err)
		}
		if ref := metav1.GetControllerOf(&existing); ref != nil && ref.UID == parent.GetUID() && Equal(&existing, c) {
			return &existing, nil
		}
		*collisionCount++
	}
}

// Renumber moves an existing revision to number rev, which is how re-applying an old template
// makes its revision the newest again, and sets annotations on it (those a new revision of the
// workload would carry now).
func (h History) Renumber(ctx context.Context, r *appsv1.ControllerRevision, rev int64, annotations map[string]string) (*appsv1.ControllerRevision, error) {
	if r.Revision == rev {
		return r, nil
	}
	c := r.DeepCopy()
	c.Revision = rev
	for k, v := range annotations {
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[k] = v
	}
	if err := h.Client.Update(ctx, c); err != nil {
		return nil, fmt.Errorf("renumber revision %s: %w", r.Name, err)
	}
	return c, nil
}

// Truncate deletes the oldest revisions beyond limit, never one that is in use.
func (h History) Truncate(ctx context.Context, sorted []*appsv1.ControllerRevision, inUse map[string]bool, limit int) error {
	var removable []*appsv1.ControllerRevision
	for _, r := range sorted {
		if !inUse[r.Name] {
			removable = append(removable, r)
		}
	}
	excess := len(removable) - limit
	for i := 0; i < excess; i++ {
		if err := h.Client.Delete(ctx, removable[i]); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete old revision %s: %w", removable[i].Name, err)
		}
	}
	return nil
}

// DefaultHistoryLimit is how many unused revisions a workload keeps when its
// revisionHistoryLimit is not set.
const DefaultHistoryLimit = 10

// TruncateUnused deletes the oldest revisions of sorted that no name in inUse names, beyond
// limit (DefaultHistoryLimit when nil).
func (h History) TruncateUnused(ctx context.Context, sorted []*appsv1.ControllerRevision, limit *int32, inUse ...string) error {
	used := make(map[string]bool, len(inUse))
	for _, n := range inUse {
		used[n] = true
	}
	n := DefaultHistoryLimit
	if limit != nil {
		n = int(*limit)
	}
	return h.Truncate(ctx, sorted, used, n)
}

// Resolve returns the revision that holds want (built with New) among the parent's history,
// sorted, and history with it. A template seen before (a rollback re-applies an old one) reuses
// its revision, made the newest unless it already is; a new template gets a new revision,
// created with Create.
func (h History) Resolve(ctx context.Context, parent metav1.Object, gvk schema.GroupVersionKind, history []*appsv1.ControllerRevision, want *appsv1.ControllerRevision, collisionCount *int32) (*appsv1.ControllerRevision, []*appsv1.ControllerRevision, error) {
	var update *appsv1.ControllerRevision
	if equal := FindEqual(history, want); len(equal) > 0 {
		found := equal[len(equal)-1]
		if history[len(history)-1].Name != found.Name {
			var err error
			if found, err = h.Renumber(ctx, found, Next(history), want.Annotations); err != nil {
				return nil, nil, err
			}
		}
		update = found
	} else {
		created, err := h.Create(ctx, parent, gvk, want, collisionCount)
		if err != nil {
			return nil, nil, err
		}
		update = created
		history = append(history, created)
	}
	out := make([]*appsv1.ControllerRevision, 0, len(history))
	for _, r := range history {
		if r.Name == update.Name {
			r = update
		}
		out = append(out, r)
	}
	Sort(out)
	return update, out, nil
}

// TemplatePatch is the revision data of a workload whose revisions are its spec.template: the
// template as a strategic merge patch that replaces the whole of it.
func TemplatePatch(template any) ([]byte, error) {
	raw, err := json.Marshal(template)
	if err != nil {
		return nil, fmt.Errorf("encode template: %w", err)
	}
	var tmpl map[string]any
	if err := json.Unmarshal(raw, &tmpl); err != nil {
		return nil, fmt.Errorf("decode template: %w", err)
	}
	tmpl["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": tmpl}})
}

// Workload is what Read needs of a workload whose revisions are its pod template.
type Workload struct {
	Parent metav1.Object
	GVK    schema.GroupVersionKind
	// Selector is the match labels of the workload's selector, which its revisions carry.
	Selector map[string]string
	// Template is the pod template (TemplatePatch makes the revision's data of it).
	Template any
	// Labels go on a new revision.
	Labels map[string]string
	// Annotations go on a new revision, and on an older one that re-applying its template makes
	// the newest again.
	Annotations map[string]string
	// CurrentRevision is the name the workload's status gives its current revision.
	CurrentRevision string
}

// Revisions is a workload's history, sorted, with its update and current revisions.
type Revisions struct {
	History         []*appsv1.ControllerRevision
	Update, Current *appsv1.ControllerRevision
}

// Read lists a workload's history, finds or makes the revision of its template (Resolve), which
// is the update revision, and finds the current one: the revision its status names, else the
// update revision.
func (h History) Read(ctx context.Context, w Workload, collisionCount *int32) (Revisions, error) {
	history, err := h.List(ctx, w.Parent.GetNamespace(), w.Selector, w.Parent.GetUID())
	if err != nil {
		return Revisions{}, err
	}
	data, err := TemplatePatch(w.Template)
	if err != nil {
		return Revisions{}, err
	}
	want := New(w.Parent, w.GVK, w.Labels, data, Next(history), collisionCount)
	if len(w.Annotations) > 0 {
		want.Annotations = maps.Clone(w.Annotations)
	}
	update, sorted, err := h.Resolve(ctx, w.Parent, w.GVK, history, want, collisionCount)
	if err != nil {
		return Revisions{}, err
	}
	out := Revisions{History: sorted, Update: update, Current: update}
	for _, r := range sorted {
		if r.Name == w.CurrentRevision {
			out.Current = r
		}
	}
	return out, nil
}

// Tracked is what one reconcile reads of a workload's revisions: its Revisions, and the
// collision count that naming the update revision reached, which the status records.
type Tracked struct {
	Revisions
	CollisionCount int32
}

// Track reads a workload's revisions (Read), counting collisions on from the count its status
// holds (nil is none). On an error the count reached so far is kept.
func (h History) Track(ctx context.Context, w Workload, statusCount *int32) (Tracked, error) {
	t := Tracked{CollisionCount: ptr.Deref(statusCount, 0)}
	var err error
	t.Revisions, err = h.Read(ctx, w, &t.CollisionCount)
	return t, err
}

// Named returns the revision called name from history, or nil.
func Named(history []*appsv1.ControllerRevision, name string) *appsv1.ControllerRevision {
	for _, r := range history {
		if r.Name == name {
			return r
		}
	}
	return nil
}
