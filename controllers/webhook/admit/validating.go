package admit

import (
	"context"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
)

// ValidatingHandler validates one kind on CREATE and UPDATE and, when asked, guards its
// deletion.
type ValidatingHandler[E any, T Object[E]] struct {
	kind     Kind
	validate func(ctx context.Context, obj, old T) (field.ErrorList, error)
	// guard and deletion guard DELETE; nil deletion allows every DELETE.
	guard    *deletionprotection.Guard
	deletion func(old T) error
}

// Validating returns the validating handler of kind: validate returns every field error of
// obj (old is the stored object on UPDATE when kind.WithOld, nil otherwise), or an error that
// refuses the request (see Refuse). validate's ctx carries the request, for
// admission.RequestFromContext.
func Validating[E any, T Object[E]](kind Kind, validate func(ctx context.Context, obj, old T) (field.ErrorList, error)) *ValidatingHandler[E, T] {
	return &ValidatingHandler[E, T]{kind: kind, validate: validate}
}

// ProtectDeletion has every DELETE that guard checks (ResourcesDeletionProtection on, the
// object sent) judged by check on the object being deleted; guard answers the verdict: an error
// refuses the deletion with 403 and is logged, unless guard lets it through.
func (h *ValidatingHandler[E, T]) ProtectDeletion(guard *deletionprotection.Guard, check func(old T) error) *ValidatingHandler[E, T] {
	h.guard, h.deletion = guard, check
	return h
}

// Option sets one option of the kind an Env hands a handler.
type Option func(*Kind)

// ReadOld hands the stored object over on UPDATE (Kind.WithOld).
func ReadOld(k *Kind) { k.WithOld = true }

// LetDeletingPass admits, unchecked, an object being deleted (Kind.PassDeleting).
func LetDeletingPass(k *Kind) { k.PassDeleting = true }

// PureValidating builds, for Webhooks.Validating, the validating handler of the Env's kind with
// opts set, over a validation that reads nothing but the objects.
func PureValidating[E any, T Object[E]](validate func(obj, old T) field.ErrorList, opts ...Option) func(Env) admission.Handler {
	return func(e Env) admission.Handler {
		for _, o := range opts {
			o(&e.Kind)
		}
		return Validating(e.Kind, Pure(validate))
	}
}

// Pure lifts a validation that reads nothing but the objects.
func Pure[T any](validate func(obj, old T) field.ErrorList) func(context.Context, T, T) (field.ErrorList, error) {
	return func(_ context.Context, obj, old T) (field.ErrorList, error) { return validate(obj, old), nil }
}

// Handle refuses an invalid object with every field error (422), or a protected deletion (403).
// Other operations are allowed.
func (h *ValidatingHandler[E, T]) Handle(ctx context.Context, req admission.Request) admission.Response {
	ctx = admission.NewContextWithRequest(ctx, req)
	switch {
	case req.Operation == admissionv1.Delete:
		return h.handleDelete(ctx, req)
	case !createOrUpdate(req):
		return admission.Allowed("")
	}
	obj, err := object[E, T](h.kind, req)
	if err != nil {
		return answer(err)
	}
	if h.kind.PassDeleting && obj.GetDeletionTimestamp() != nil {
		return admission.Allowed("")
	}
	old, err := stored[E, T](h.kind, req)
	if err != nil {
		return answer(err)
	}
	errs, err := h.validate(ctx, obj, old)
	if err != nil {
		return answer(err)
	}
	if len(errs) > 0 {
		return admission.Errored(http.StatusUnprocessableEntity, errs.ToAggregate())
	}
	return admission.Allowed("")
}

func (h *ValidatingHandler[E, T]) handleDelete(ctx context.Context, req admission.Request) admission.Response {
	if h.deletion == nil || !h.guard.Checks(req) {
		return admission.Allowed("")
	}
	old, err := decodeOld[E, T](h.kind, req)
	if err != nil {
		return answer(err)
	}
	return h.guard.Answer(ctx, req, h.deletion(old))
}
