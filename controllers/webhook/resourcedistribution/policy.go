package resourcedistribution

import (
	"context"
	"fmt"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/resourcedistribution"
)

// The two cluster policies a platform may turn on; both apply to a new spec and to a changed
// one, so that an existing ResourceDistribution's metadata can still be edited.
const (
	excludedFlag = "--resourcedistribution-excluded-namespaces (chart value resourceDistribution.excludedNamespaces)"
	rightsFlag   = "--resourcedistribution-check-author-rights (chart value resourceDistribution.checkAuthorRights)"
)

// resources maps the kinds spec.resource may be to their resource names.
var resources = map[string]string{"Secret": "secrets", "ConfigMap": "configmaps"}

// authorVerbs are the rights on the resource's kind the author must hold where a copy goes: the
// controller creates the copies and updates them when the source changes.
var authorVerbs = []string{"create", "update"}

// validateExcluded refuses a spec that names a namespace the manager never copies into.
func validateExcluded(t *appsv1alpha1.ResourceDistributionTargets, excluded sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	for i, n := range t.IncludedNamespaces.List {
		if excluded.Has(n.Name) {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "targets", "includedNamespaces", "list").Index(i).Child("name"),
				fmt.Sprintf("namespace %q never receives copies on this cluster (%s); remove it from the list", n.Name, excludedFlag)))
		}
	}
	return errs
}

// access is one place whose rights the author must hold: a namespace, or every namespace ("").
type access struct {
	namespace string
	path      *field.Path
}

// accessNeeded lists where the author of targets must be able to write the copies: every
// namespace when allNamespaces or a namespace selector can pick namespaces that do not exist
// yet, else each included namespace.
func accessNeeded(t *appsv1alpha1.ResourceDistributionTargets) []access {
	targets := field.NewPath("spec", "targets")
	if t.AllNamespaces {
		return []access{{"", targets.Child("allNamespaces")}}
	}
	if s := t.NamespaceLabelSelector; len(s.MatchLabels) > 0 || len(s.MatchExpressions) > 0 {
		return []access{{"", targets.Child("namespaceLabelSelector")}}
	}
	out := make([]access, 0, len(t.IncludedNamespaces.List))
	for i, n := range t.IncludedNamespaces.List {
		out = append(out, access{n.Name, targets.Child("includedNamespaces", "list").Index(i).Child("name")})
	}
	return out
}

// authorRights asks the apiserver whether user may create and update the resource's kind
// wherever rd's copies go, and returns a Forbidden error for each place and right missing.
func authorRights(ctx context.Context, reviews client.Writer, user authenticationv1.UserInfo, rd *appsv1alpha1.ResourceDistribution) (field.ErrorList, error) {
	obj, err := resourcedistribution.DecodeResource(rd.Spec.Resource.Raw)
	if err != nil {
		return nil, err
	}
	resource, ok := resources[obj.GetKind()]
	if !ok {
		return nil, fmt.Errorf("no resource for kind %q", obj.GetKind())
	}
	places := accessNeeded(&rd.Spec.Targets)
	// One cluster-wide answer settles a long list of namespaces for an author who holds the
	// rights everywhere.
	if len(places) > 1 {
		missing, err := missingVerbs(ctx, reviews, user, "", resource)
		if err != nil || len(missing) == 0 {
			return nil, err
		}
	}
	var errs field.ErrorList
	for _, a := range places {
		missing, err := missingVerbs(ctx, reviews, user, a.namespace, resource)
		if err != nil {
			return nil, err
		}
		if len(missing) == 0 {
			continue
		}
		where := fmt.Sprintf("in namespace %q", a.namespace)
		if a.namespace == "" {
			where = "in every namespace (cluster-wide)"
		}
		errs = append(errs, field.Forbidden(a.path, fmt.Sprintf("user %q may not %s %s %s, and the copies would be written there on their behalf (%s); ask for that right, or target only namespaces where you hold it",
			user.Username, strings.Join(missing, " or "), resource, where, rightsFlag)))
	}
	return errs, nil
}

// missingVerbs returns the authorVerbs user may not use on resource in namespace.
func missingVerbs(ctx context.Context, reviews client.Writer, user authenticationv1.UserInfo, namespace, resource string) ([]string, error) {
	var missing []string
	for _, verb := range authorVerbs {
		allowed, err := review(ctx, reviews, user, namespace, verb, resource)
		if err != nil {
			return nil, err
		}
		if !allowed {
			missing = append(missing, verb)
		}
	}
	return missing, nil
}

// review asks whether user may do verb on resource (core group) in namespace, "" being every
// namespace.
func review(ctx context.Context, reviews client.Writer, user authenticationv1.UserInfo, namespace, verb, resource string) (bool, error) {
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, Groups: user.Groups, UID: user.UID, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: verb, Version: "v1", Resource: resource},
	}}
	if err := reviews.Create(ctx, sar); err != nil {
		return false, fmt.Errorf("ask the apiserver whether %s may %s %s: %w", user.Username, verb, resource, err)
	}
	return sar.Status.Allowed, nil
}
