package installer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kruise-addon/kruise-addon/installer/facts"
	"github.com/kruise-addon/kruise-addon/uninstallgate"
)

// A way out while the manager is down. The uninstall gate refuses while users' custom resources
// remain and prints the kubectl commands that delete them; but the add-on's validating webhooks
// check the DELETE of CloneSets, Advanced StatefulSets and UnitedDeployments (deletion
// protection) and fail closed, so while no manager answers, those commands fail and the uninstall
// has no way forward. When the gate refuses for nothing but those resources and the manager has
// no ready endpoint, the uninstall sets failurePolicy Ignore on exactly the webhooks that would
// refuse the printed DELETEs. A webhook that fails open is still called: once a manager answers
// again it decides as before, deletion protection included; only a call that fails is let
// through. The same goes for the webhooks, validating or defaulting, that fail closed on the
// UPDATE that lets go of a deleted object the manager finalizes. Nothing else changes, and the
// next upgrade sets the chart's policy back.

// webhooksBlockingCleanup returns the indexes of the webhooks that fail closed on a DELETE of a
// kind in remaining, or on an UPDATE of a kind the manager finalizes (letting go of a deleted
// object is an UPDATE of its finalizers): those the cleanup would wait for. Versions do not
// matter: the apiserver calls a webhook for every version of a resource it matches.
func webhooksBlockingCleanup(hooks []hookView, remaining []uninstallgate.KindCount) []int {
	var out []int
	for i, w := range hooks {
		if w.policy != nil && *w.policy == admissionregistrationv1.Ignore {
			continue
		}
		if slices.ContainsFunc(remaining, func(kc uninstallgate.KindCount) bool {
			return covers(w.rules, kc, admissionregistrationv1.Delete) ||
				len(kc.Finalizers) > 0 && covers(w.rules, kc, admissionregistrationv1.Update)
		}) {
			out = append(out, i)
		}
	}
	return out
}

func covers(rules []admissionregistrationv1.RuleWithOperations, kc uninstallgate.KindCount, op admissionregistrationv1.OperationType) bool {
	has := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
	for _, r := range rules {
		ops := make([]string, len(r.Operations))
		for i, op := range r.Operations {
			ops[i] = string(op)
		}
		if has(ops, string(op)) && has(r.APIGroups, kc.Resource.Group) && has(r.Resources, kc.Resource.Resource) {
			return true
		}
	}
	return false
}

// managerDown reports whether the manager cannot answer: no ready endpoint behind the webhook
// Service (or, in URL mode, no ready manager pod).
func (i *Installer) managerDown(ctx context.Context, o Options) (bool, error) {
	w, err := i.webhook(ctx, o.Namespace)
	if err != nil {
		return false, err
	}
	return w.ReadyEndpoints == 0, nil
}

// hookView is what webhooksBlockingCleanup reads of a webhook of either configuration.
type hookView struct {
	name   string
	policy *admissionregistrationv1.FailurePolicyType
	rules  []admissionregistrationv1.RuleWithOperations
}

// webhookConfigurations are the release's two webhook configurations, read and patched alike
// through the dynamic client: what the cleanup needs of a webhook has the same fields in both.
var webhookConfigurations = []struct {
	name     string
	resource schema.GroupVersionResource
}{
	{MutatingWebhookConfiguration, admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations")},
	{ValidatingWebhookConfiguration, admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations")},
}

// openCleanup sets failurePolicy Ignore on the webhooks of this release's two configurations
// that would refuse the gate's cleanup of remaining; it is called only while the manager is
// down. It returns the names of the webhooks it changed (unique across both configurations);
// none of a configuration that belongs to another release.
func (i *Installer) openCleanup(ctx context.Context, o Options, remaining []uninstallgate.KindCount) ([]string, error) {
	owner := facts.Owner{Release: o.ReleaseName, Namespace: o.Namespace}
	var opened []string
	for _, c := range webhookConfigurations {
		obj, err := i.dynamic.Resource(c.resource).Get(ctx, c.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("get %s: %w", c.name, err)
		}
		if facts.OwnerOf(obj.GetAnnotations()) != owner {
			continue
		}
		var read struct {
			Webhooks []struct {
				Name          string                                       `json:"name"`
				FailurePolicy *admissionregistrationv1.FailurePolicyType   `json:"failurePolicy"`
				Rules         []admissionregistrationv1.RuleWithOperations `json:"rules"`
			} `json:"webhooks"`
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &read); err != nil {
			return nil, fmt.Errorf("read %s: %w", c.name, err)
		}
		views := make([]hookView, len(read.Webhooks))
		for n, w := range read.Webhooks {
			views[n] = hookView{w.Name, w.FailurePolicy, w.Rules}
		}
		body, names, err := failOpenPatch(views, remaining)
		if err != nil {
			return nil, err
		}
		if len(names) == 0 {
			continue
		}
		if _, err := i.dynamic.Resource(c.resource).Patch(ctx, c.name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
			return nil, fmt.Errorf("let %s of %s fail open: %w", strings.Join(names, ", "), c.name, err)
		}
		opened = append(opened, names...)
	}
	return opened, nil
}

// failOpenPatch returns the JSON patch that sets failurePolicy Ignore on the webhooks of a
// configuration (hooks) that block the cleanup of remaining, and their names; none, if none do.
func failOpenPatch(hooks []hookView, remaining []uninstallgate.KindCount) ([]byte, []string, error) {
	idx := webhooksBlockingCleanup(hooks, remaining)
	if len(idx) == 0 {
		return nil, nil, nil
	}
	// Each change is tested against the webhook's name, so that a configuration changed since
	// the read is refused as a whole rather than changed at the wrong entry.
	var patch []map[string]any
	var names []string
	for _, n := range idx {
		path := fmt.Sprintf("/webhooks/%d", n)
		patch = append(patch,
			map[string]any{"op": "test", "path": path + "/name", "value": hooks[n].name},
			map[string]any{"op": "replace", "path": path + "/failurePolicy", "value": admissionregistrationv1.Ignore})
		names = append(names, hooks[n].name)
	}
	body, err := json.Marshal(patch)
	return body, names, err
}

// openedCleanupNote says what openCleanup changed, under the gate's message.
func openedCleanupNote(names []string) string {
	return fmt.Sprintf("the manager has no ready endpoint, so the webhooks that check this cleanup (%s of the add-on's webhook configurations) now fail open: "+
		"the commands above work while it is down, and a manager that answers again still checks them (deletion protection included); "+
		"`kruise-addon upgrade` sets their failurePolicy back", strings.Join(names, ", "))
}

// releaseHeld removes the manager's finalizers (apis/kinds) from the objects of remaining that
// are already being deleted; it is called only while the manager is down, which alone removes
// them. What the finalizers guard goes with the release: an ImagePullJob's secret copies live in
// the daemon's config namespace, a PodProbeMarker's probes in the manager-made NodePodProbes,
// a ContainerRecreateRequest's hold on its pod's readiness in the pod's condition, which the
// pod's next status from the kubelet no longer needs once no manager reads it. The installer
// deletes no object: it only lets go of those the user deleted. It returns how many it released.
func (i *Installer) releaseHeld(ctx context.Context, remaining []uninstallgate.KindCount) (int, error) {
	released := 0
	for _, kc := range remaining {
		if kc.Held == 0 {
			continue
		}
		list, err := i.dynamic.Resource(kc.Resource).List(ctx, metav1.ListOptions{})
		if err != nil {
			return released, fmt.Errorf("list %s: %w", kc.Resource.GroupResource(), err)
		}
		for _, obj := range list.Items {
			kept := slices.DeleteFunc(slices.Clone(obj.GetFinalizers()), func(f string) bool { return slices.Contains(kc.Finalizers, f) })
			if obj.GetDeletionTimestamp() == nil || len(kept) == len(obj.GetFinalizers()) {
				continue
			}
			// The resourceVersion makes the patch fail rather than drop a finalizer added since.
			patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": kept, "resourceVersion": obj.GetResourceVersion()}})
			if err != nil {
				return released, err
			}
			_, err = i.dynamic.Resource(kc.Resource).Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
			if err != nil && !apierrors.IsNotFound(err) {
				return released, fmt.Errorf("release %s %s/%s from the manager's finalizers: %w", kc.Kind, obj.GetNamespace(), obj.GetName(), err)
			}
			released++
		}
	}
	return released, nil
}

// heldNote says, under the gate's message while the manager is down, how deleted objects that
// wait for the manager's finalizers go.
const heldNote = "objects of a kind the manager finalizes stay after their delete while it is down: " +
	"run the commands above, then uninstall again, which lets go of the deleted objects that wait only for the manager"
