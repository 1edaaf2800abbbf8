package installer

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"

	"github.com/kruise-addon/kruise-addon/installer/facts"
	"github.com/kruise-addon/kruise-addon/installer/internal/await"
)

// namespaceChange is what an install did to its namespace before Helm ran, so that an install
// that ends with no release can give the namespace back as it found it.
type namespaceChange struct {
	name string
	// created is set when the install created the namespace; labelled when it added
	// control-plane=openkruise to one that existed.
	created, labelled bool
}

// ensureNamespace creates the install namespace with the control-plane=openkruise label, or
// adds the label, before any webhook exists: the pod webhooks skip labelled namespaces, so the
// add-on's own pods never wait for the webhook they are about to serve.
func (i *Installer) ensureNamespace(ctx context.Context, name string) (namespaceChange, error) {
	c := namespaceChange{name: name}
	ns, err := i.kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = i.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: name, Labels: map[string]string{NamespaceLabelKey: NamespaceLabelValue},
		}}, metav1.CreateOptions{FieldManager: FieldManager})
		if err != nil {
			return c, fmt.Errorf("create namespace %s: %w", name, err)
		}
		c.created = true
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("get namespace %s: %w", name, err)
	}
	if ns.Labels[NamespaceLabelKey] == NamespaceLabelValue {
		return c, nil
	}
	if err := i.labelNamespace(ctx, name, fmt.Sprintf("%q:%q", NamespaceLabelKey, NamespaceLabelValue)); err != nil {
		return c, fmt.Errorf("label namespace %s: %w", name, err)
	}
	c.labelled = true
	return c, nil
}

// labelNamespace merge-patches the namespace's labels with value, a JSON object's members
// ("key":"value", or "key":null to remove it).
func (i *Installer) labelNamespace(ctx context.Context, name, value string) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%s}}}`, value)
	_, err := i.kube.CoreV1().Namespaces().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: FieldManager})
	return err
}

// namespaceReturn is what giveBack did with the install namespace.
type namespaceReturn struct {
	// Deleted is set when the namespace was deleted; Kept, with Holds, when the install created
	// it but it holds objects that are not the release's.
	Deleted, Kept bool
	Holds         []string
	// Unlabelled is set when the install's control-plane label was taken off again.
	Unlabelled bool
}

func (r namespaceReturn) describe(name string) string {
	switch {
	case r.Deleted:
		return fmt.Sprintf("namespace %s (created by this install) deleted", name)
	case r.Kept:
		return fmt.Sprintf("namespace %s (created by this install) kept without the %s=%s label, since it holds %s",
			name, NamespaceLabelKey, NamespaceLabelValue, strings.Join(r.Holds, ", "))
	case r.Unlabelled:
		return fmt.Sprintf("label %s=%s taken off namespace %s again", NamespaceLabelKey, NamespaceLabelValue, name)
	}
	return ""
}

// giveBack returns the install namespace as the install found it, once the install ended with no
// release stored in it: a namespace it created is deleted when it holds nothing but the release's
// objects, and otherwise kept without the label that would keep the add-on's pod webhooks out
// of it; a label it added is taken off. A namespace with a release stored in it is left alone,
// so that a release is never cut off from its record.
func (i *Installer) giveBack(ctx context.Context, c namespaceChange, o Options) (namespaceReturn, error) {
	var r namespaceReturn
	if !c.created && !c.labelled {
		return r, nil
	}
	if c.created {
		holds, err := i.strayObjects(ctx, c.name, facts.Owner{Release: o.ReleaseName, Namespace: o.Namespace})
		if err != nil {
			return r, fmt.Errorf("list what namespace %s holds: %w", c.name, err)
		}
		if len(holds) == 0 {
			err := i.kube.CoreV1().Namespaces().Delete(ctx, c.name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return r, fmt.Errorf("delete namespace %s, which it created: %w", c.name, err)
			}
			r.Deleted = true
			return r, nil
		}
		r.Kept, r.Holds = true, holds
	}
	if err := i.labelNamespace(ctx, c.name, fmt.Sprintf("%q:null", NamespaceLabelKey)); err != nil && !apierrors.IsNotFound(err) {
		return r, fmt.Errorf("take label %s off namespace %s: %w", NamespaceLabelKey, c.name, err)
	}
	r.Unlabelled = true
	return r, nil
}

// strayObjects names the objects in namespace that are not the release's, sorted; see stray.
func (i *Installer) strayObjects(ctx context.Context, namespace string, owner facts.Owner) ([]string, error) {
	lists, err := await.Read(ctx, "discover the namespaced resources", func() ([]*metav1.APIResourceList, error) {
		return i.kube.Discovery().ServerPreferredNamespacedResources()
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, list := range discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list"}}, lists) {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range list.APIResources {
			gvr := gv.WithResource(r.Name)
			objs, err := i.metadata.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, fmt.Errorf("list %s: %w", gvr.GroupResource(), err)
			}
			for _, obj := range objs.Items {
				if stray(gvr.GroupResource(), &obj, owner) {
					out = append(out, r.Kind+" "+obj.Name)
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// stray reports whether obj, found in a namespace the install created, is someone else's: not
// the release's (by Helm's ownership annotations, or as its release record), not made by a
// controller from another object (owner references: the objects they name are judged
// themselves), and none of what Kubernetes and the manager make on their own (events, the
// endpoints of Services, the root CA ConfigMap, the default ServiceAccount, the manager's
// leader election Lease), nor the records of the server's operations on the release.
func stray(gr schema.GroupResource, obj metav1.Object, owner facts.Owner) bool {
	switch {
	case facts.OwnerOf(obj.GetAnnotations()) == owner:
		return false
	case len(obj.GetOwnerReferences()) > 0:
		return false
	case gr.Resource == "events", gr == schema.GroupResource{Resource: "endpoints"}:
		return false
	case gr == schema.GroupResource{Resource: "configmaps"} && obj.GetName() == "kube-root-ca.crt":
		return false
	case gr == schema.GroupResource{Resource: "configmaps"} && obj.GetLabels()[OperationRecordLabel] != "":
		return false
	case gr == schema.GroupResource{Resource: "serviceaccounts"} && obj.GetName() == "default":
		return false
	case gr == schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"} && obj.GetName() == facts.ManagerLease:
		return false
	case gr == schema.GroupResource{Resource: "secrets"} && obj.GetLabels()["owner"] == "helm" && obj.GetLabels()["name"] == owner.Release:
		return false
	}
	return true
}

// OperationRecordLabel marks the record of an operation of `kruise-addon serve`, a ConfigMap
// beside the release the operation acts on; its value is the operation's ID. A namespace the
// install created is given back with the records in it: they tell of the release, as its own
// objects do.
const OperationRecordLabel = "kruise-addon.io/operation"

// namespaceGoneWait bounds how long a command waits for a terminating namespace to go.
const namespaceGoneWait = time.Minute

// waitNamespaceGone waits, at most namespaceGoneWait and within ctx, until the namespace is
// gone; it returns an error when it is still there.
func (i *Installer) waitNamespaceGone(ctx context.Context, name string) error {
	return wait.PollUntilContextTimeout(ctx, time.Second, namespaceGoneWait, true, func(ctx context.Context) (bool, error) {
		_, err := i.kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, nil
	})
}
