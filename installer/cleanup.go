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
// through. Nothing else changes (the mutating webhooks, which fail closed, still hold every
// CREATE and UPDATE of those kinds), and the next upgrade sets the chart's policy back.

// webhooksBlockingCleanup returns the indexes of the webhooks that fail closed on a DELETE of a
// kind in remaining: those the printed cleanup would wait for. Versions do not matter: the
// apiserver calls a webhook for every version of a resource it matches.
func webhooksBlockingCleanup(hooks []admissionregistrationv1.ValidatingWebhook, remaining []uninstallgate.KindCount) []int {
	var out []int
	for i, w := range hooks {
		if w.FailurePolicy != nil && *w.FailurePolicy == admissionregistrationv1.Ignore {
			continue
		}
		if slices.ContainsFunc(remaining, func(kc uninstallgate.KindCount) bool { return coversDelete(w.Rules, kc) }) {
			out = append(out, i)
		}
	}
	return out
}

func coversDelete(rules []admissionregistrationv1.RuleWithOperations, kc uninstallgate.KindCount) bool {
	has := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
	for _, r := range rules {
		ops := make([]string, len(r.Operations))
		for i, op := range r.Operations {
			ops[i] = string(op)
		}
		if has(ops, string(admissionregistrationv1.Delete)) && has(r.APIGroups, kc.Resource.Group) && has(r.Resources, kc.Resource.Resource) {
			return true
		}
	}
	return false
}

// openCleanup sets failurePolicy Ignore on the webhooks of this release's validating
// configuration that would refuse the gate's cleanup of remaining, when the manager cannot
// answer them: no ready endpoint behind the webhook Service (or, in URL mode, no ready manager
// pod). It returns the names of the webhooks it changed; none while a manager is ready, or when
// the configuration belongs to another release.
func (i *Installer) openCleanup(ctx context.Context, o Options, remaining []uninstallgate.KindCount) ([]string, error) {
	w, err := i.webhook(ctx, o.Namespace)
	if err != nil {
		return nil, err
	}
	if w.ReadyEndpoints > 0 {
		return nil, nil
	}
	vwc, err := i.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, ValidatingWebhookConfiguration, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", ValidatingWebhookConfiguration, err)
	}
	if facts.OwnerOf(vwc.Annotations) != (facts.Owner{Release: o.ReleaseName, Namespace: o.Namespace}) {
		return nil, nil
	}
	idx := webhooksBlockingCleanup(vwc.Webhooks, remaining)
	if len(idx) == 0 {
		return nil, nil
	}
	// Each change is tested against the webhook's name, so that a configuration changed since
	// the read is refused as a whole rather than changed at the wrong entry.
	var patch []map[string]any
	var names []string
	for _, n := range idx {
		path := fmt.Sprintf("/webhooks/%d", n)
		patch = append(patch,
			map[string]any{"op": "test", "path": path + "/name", "value": vwc.Webhooks[n].Name},
			map[string]any{"op": "replace", "path": path + "/failurePolicy", "value": admissionregistrationv1.Ignore})
		names = append(names, vwc.Webhooks[n].Name)
	}
	body, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	if _, err := i.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Patch(ctx, ValidatingWebhookConfiguration, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		return nil, fmt.Errorf("let %s fail open: %w", strings.Join(names, ", "), err)
	}
	return names, nil
}

// openedCleanupNote says what openCleanup changed, under the gate's message.
func openedCleanupNote(names []string) string {
	return fmt.Sprintf("the manager has no ready endpoint, so the webhooks that check these DELETEs (%s of %s) now fail open: "+
		"the commands above work while it is down, and a manager that answers again still checks them (deletion protection included); "+
		"`kruise-addon upgrade` sets their failurePolicy back", strings.Join(names, ", "), ValidatingWebhookConfiguration)
}
