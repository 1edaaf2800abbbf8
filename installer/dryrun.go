package installer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/utils/ptr"
)

// dryRunManifest has the apiserver check every object of the rendered manifest before anything
// is applied: a server-side apply with dryRun=All, as the Helm action would apply it, so that a
// value the schema and the templates accept but the apiserver refuses (a field's own validation,
// an admission policy, a quota) is bad input naming the object and the field, with nothing
// changed. Helm hooks are left out (they run only at a plain `helm uninstall`), and so is an
// object in a namespace the manifest itself creates, which cannot exist before the action.
func dryRunManifest(ctx context.Context, cfg *action.Configuration, manifest string) error {
	if strings.TrimSpace(manifest) == "" {
		return nil
	}
	infos, err := cfg.KubeClient.Build(strings.NewReader(manifest), false)
	if err != nil {
		return &InvalidError{Err: fmt.Errorf("read the rendered objects: %w", err)}
	}
	created := map[string]bool{}
	for _, info := range infos {
		if info.Mapping.GroupVersionKind.Kind == "Namespace" {
			created[info.Name] = true
		}
	}
	var refused []string
	for _, info := range infos {
		if isHook(info) {
			continue
		}
		data, err := json.Marshal(info.Object)
		if err != nil {
			return err
		}
		h := resource.NewHelper(info.Client, info.Mapping).DryRun(true).WithFieldManager(FieldManager)
		_, err = h.Patch(info.Namespace, info.Name, types.ApplyPatchType, data, &metav1.PatchOptions{Force: ptr.To(true)})
		switch {
		case err == nil:
		case inMissingNamespace(err) && created[info.Namespace]:
		case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err):
			refused = append(refused, fmt.Sprintf("%s %s: %s", info.Mapping.GroupVersionKind.Kind, objectName(info), reasonOf(err)))
		default:
			return fmt.Errorf("check %s %s with the apiserver: %w", info.Mapping.GroupVersionKind.Kind, objectName(info), err)
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
	}
	if len(refused) > 0 {
		return &InvalidError{Err: fmt.Errorf("the apiserver refuses what these values would apply (nothing was applied):\n  %s", strings.Join(refused, "\n  "))}
	}
	return nil
}

func isHook(info *resource.Info) bool {
	m, err := meta.Accessor(info.Object)
	return err == nil && m.GetAnnotations()["helm.sh/hook"] != ""
}

func objectName(info *resource.Info) string {
	if info.Namespace == "" {
		return info.Name
	}
	return info.Namespace + "/" + info.Name
}

// inMissingNamespace reports the apiserver's answer to an object whose namespace does not exist.
func inMissingNamespace(err error) bool {
	var se apierrors.APIStatus
	if !errors.As(err, &se) || !apierrors.IsNotFound(err) {
		return false
	}
	d := se.Status().Details
	return d != nil && d.Kind == "namespaces"
}

// reasonOf is the apiserver's own message, which names the field and what is wrong with it.
func reasonOf(err error) string {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return se.Status().Message
	}
	return err.Error()
}
