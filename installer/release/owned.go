package release

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kruise-addon/kruise-addon/installer/facts"
)

// Deletion is what DeleteIfOwned did with an object.
type Deletion string

const (
	// NotFound: the object does not exist.
	NotFound Deletion = "not-found"
	// Deleted: it carried the owner's ownership and was deleted.
	Deleted Deletion = "deleted"
	// Deleting: it carried the owner's ownership and was being deleted already.
	Deleting Deletion = "deleting"
	// Kept: it carries another owner's ownership, or none, and was left alone.
	Kept Deletion = "kept"
)

// DeleteIfOwned deletes info's live object only when it carries owner's Helm ownership, with the
// UID it read as a precondition, so that an object that changed hands since the read is never
// deleted. It returns the live object's owner.
func DeleteIfOwned(info *resource.Info, owner facts.Owner, policy metav1.DeletionPropagation) (Deletion, facts.Owner, error) {
	kind := info.Mapping.GroupVersionKind.Kind
	h := resource.NewHelper(info.Client, info.Mapping)
	live, err := h.Get(info.Namespace, info.Name)
	if apierrors.IsNotFound(err) {
		return NotFound, facts.Owner{}, nil
	}
	if err != nil {
		return "", facts.Owner{}, fmt.Errorf("get %s %s: %w", kind, info.Name, err)
	}
	acc, err := meta.Accessor(live)
	if err != nil {
		return "", facts.Owner{}, fmt.Errorf("read %s %s: %w", kind, info.Name, err)
	}
	liveOwner := facts.OwnerOf(acc.GetAnnotations())
	if liveOwner != owner {
		return Kept, liveOwner, nil
	}
	if acc.GetDeletionTimestamp() != nil {
		return Deleting, liveOwner, nil
	}
	uid := acc.GetUID()
	_, err = h.DeleteWithOptions(info.Namespace, info.Name, &metav1.DeleteOptions{
		PropagationPolicy: &policy, Preconditions: &metav1.Preconditions{UID: &uid},
	})
	switch {
	case apierrors.IsNotFound(err):
		return NotFound, liveOwner, nil
	case apierrors.IsConflict(err):
		// Replaced by another object of that name since the read: not the one we own.
		return Kept, facts.Owner{}, nil
	case err != nil:
		return "", liveOwner, fmt.Errorf("delete %s %s: %w", kind, info.Name, err)
	}
	return Deleted, liveOwner, nil
}

// ownedOnly is the kube client an uninstall runs on. Helm deletes a release's objects by the names
// in its manifest, whoever owns them now: a release whose install failed on objects another
// release had created would delete that release's ClusterRoles, webhook configurations and
// namespaces. This client deletes only objects that carry owner's ownership, leaves the others,
// and does not wait for those.
type ownedOnly struct {
	kube.Interface
	owner facts.Owner

	mu   sync.Mutex
	kept map[string]string // by kind/namespace/name: what was kept and who owns it
}

// Delete deletes resources in the background, as Helm's client does.
func (c *ownedOnly) Delete(resources kube.ResourceList) (*kube.Result, []error) {
	return c.DeleteWithPropagationPolicy(resources, metav1.DeletePropagationBackground)
}

// DeleteWithPropagationPolicy deletes the objects of resources that carry the owner's ownership.
func (c *ownedOnly) DeleteWithPropagationPolicy(resources kube.ResourceList, policy metav1.DeletionPropagation) (*kube.Result, []error) {
	res := &kube.Result{}
	var errs []error
	for _, info := range resources {
		d, live, err := DeleteIfOwned(info, c.owner, policy)
		switch {
		case err != nil:
			errs = append(errs, err)
		case d == Kept:
			c.keep(info, live)
		case d == Deleted:
			res.Deleted = append(res.Deleted, info)
		}
	}
	return res, errs
}

// WaitForDelete waits for the objects of resources to go, except those kept.
func (c *ownedOnly) WaitForDelete(resources kube.ResourceList, timeout time.Duration) error {
	ext, ok := c.Interface.(kube.InterfaceExt)
	if !ok {
		return nil
	}
	c.mu.Lock()
	var rest kube.ResourceList
	for _, info := range resources {
		if _, kept := c.kept[key(info)]; !kept {
			rest = append(rest, info)
		}
	}
	c.mu.Unlock()
	return ext.WaitForDelete(rest, timeout)
}

func (c *ownedOnly) keep(info *resource.Info, live facts.Owner) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kept == nil {
		c.kept = map[string]string{}
	}
	name := info.Name
	if info.Namespace != "" {
		name = info.Namespace + "/" + info.Name
	}
	c.kept[key(info)] = fmt.Sprintf("%s %s (owned by %s)", info.Mapping.GroupVersionKind.Kind, name, live)
}

// Kept describes each object left because another owner, or none, holds it, sorted.
func (c *ownedOnly) Kept() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.kept))
	for _, d := range c.kept {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

func key(info *resource.Info) string {
	return info.Mapping.GroupVersionKind.GroupKind().String() + "/" + info.Namespace + "/" + info.Name
}
