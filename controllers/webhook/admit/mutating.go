package admit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// MutatingHandler defaults one kind on CREATE and UPDATE.
type MutatingHandler[E any, T Object[E]] struct {
	kind     Kind
	defaults func(ctx context.Context, obj, old T) error
}

// Mutating returns the defaulting handler of kind: defaults sets obj's defaults in place; old
// is the stored object on UPDATE when kind.WithOld, nil otherwise. An error refuses the request
// (see Refuse).
func Mutating[E any, T Object[E]](kind Kind, defaults func(ctx context.Context, obj, old T) error) *MutatingHandler[E, T] {
	return &MutatingHandler[E, T]{kind: kind, defaults: defaults}
}

// PureDefaulting builds, for Webhooks.Mutating, the defaulting handler of the Env's kind over
// defaults that read nothing but the object and cannot fail.
func PureDefaulting[E any, T Object[E]](set func(obj T)) func(Env) admission.Handler {
	return func(e Env) admission.Handler { return Mutating(e.Kind, Defaults(set)) }
}

// Defaults lifts defaults that read nothing but the object and cannot fail.
func Defaults[T any](set func(obj T)) func(context.Context, T, T) error {
	return func(_ context.Context, obj, _ T) error {
		set(obj)
		return nil
	}
}

// Handle answers with a JSON patch of what defaults changed, or Allowed when it changed nothing.
// Other operations than CREATE and UPDATE are allowed as they are.
func (h *MutatingHandler[E, T]) Handle(ctx context.Context, req admission.Request) admission.Response {
	if !createOrUpdate(req) {
		return admission.Allowed("")
	}
	obj, err := object[E, T](h.kind, req)
	if err != nil {
		return answer(err)
	}
	old, err := stored[E, T](h.kind, req)
	if err != nil {
		return answer(err)
	}
	before := obj.DeepCopyObject()
	if err := h.defaults(ctx, obj, old); err != nil {
		return answer(err)
	}
	if apiequality.Semantic.DeepEqual(before, obj) {
		return admission.Allowed("")
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("encode %s: %w", h.kind.Name, err))
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}
