package admit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/kruise-addon/kruise-addon/features"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Object is a pointer to the API object type E.
type Object[E any] interface {
	*E
	client.Object
}

// Kind says how the handlers read one kind from admission requests.
type Kind struct {
	// Name is the kind in lower case, as refusals name it: "decode cloneset: ...".
	Name string
	// Decoder reads the objects: admission.NewDecoder(scheme), or JSON.
	Decoder admission.Decoder
	// Gate, when set, is asked first on every CREATE and UPDATE, before anything is decoded;
	// an error refuses the request (500, or the code given to Refuse).
	Gate func() error
	// Namespaced refuses with 400 a request that names no namespace, or an object that names
	// another one than the request: a handler that reads other objects on the object's behalf
	// reads them only in the request's namespace. An object that names none takes the
	// request's.
	Namespaced bool
	// WithOld hands the stored object to the kind's function on UPDATE; without it, and on
	// CREATE, that function gets nil.
	WithOld bool
	// PassDeleting admits, unchecked, a CREATE or UPDATE of an object being deleted, so that its
	// finalizers can be removed whatever it holds (validating handlers only).
	PassDeleting bool
}

// JSON decodes an object as plain JSON into the handler's type, whatever apiVersion it names:
// for a kind served in two versions of one shape, so that a patch computed on the type applies
// to the object as sent.
var JSON admission.Decoder = jsonDecoder{}

type jsonDecoder struct{}

func (jsonDecoder) Decode(req admission.Request, into runtime.Object) error {
	return json.Unmarshal(req.Object.Raw, into)
}

func (jsonDecoder) DecodeRaw(raw runtime.RawExtension, into runtime.Object) error {
	return json.Unmarshal(raw.Raw, into)
}

// refusal is an error that refuses a request with its own status code.
type refusal struct {
	code int32
	err  error
}

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// Refuse makes err refuse the request with code and err's message, when a kind's function
// returns it. Any other error refuses the request with 500.
func Refuse(code int32, err error) error { return &refusal{code: code, err: err} }

// RequireGates refuses with 403, naming the first feature of need that gates has off.
func RequireGates(gates featuregate.FeatureGate, need ...featuregate.Feature) error {
	for _, f := range need {
		if !gates.Enabled(f) {
			return Refuse(http.StatusForbidden, GateOff(f))
		}
	}
	return nil
}

// GateOff is the refusal of a request that needs a gate which is off: 1.8's words first, then
// how to turn it on.
func GateOff(f featuregate.Feature) error {
	if f == features.KruiseDaemon {
		return fmt.Errorf("feature-gate %s is not enabled: kruise-daemon is off in this installation (chart value daemon.enabled=false, or kruise-addon --daemon=false); "+
			"turn it on with daemon.enabled=true (kruise-addon upgrade --daemon=true)", f)
	}
	return fmt.Errorf("feature-gate %s is not enabled: turn it on with %s=true in the chart value featureGates (kruise-addon upgrade --set featureGates=%s=true)", f, f, f)
}

// answer is the response that refuses a request for err.
func answer(err error) admission.Response {
	var r *refusal
	if errors.As(err, &r) {
		return admission.Errored(r.code, r.err)
	}
	return admission.Errored(http.StatusInternalServerError, err)
}

// object reads the request's object: Gate, then decoding, then the namespace check.
func object[E any, T Object[E]](k Kind, req admission.Request) (T, error) {
	if k.Gate != nil {
		if err := k.Gate(); err != nil {
			return nil, err
		}
	}
	obj := T(new(E))
	if err := k.Decoder.Decode(req, obj); err != nil {
		return nil, Refuse(http.StatusBadRequest, fmt.Errorf("decode %s: %w", k.Name, err))
	}
	if k.Namespaced {
		if errs := ValidateNamespace(req.Namespace, obj.GetNamespace()); len(errs) > 0 {
			return nil, Refuse(http.StatusBadRequest, errs.ToAggregate())
		}
		if obj.GetNamespace() == "" {
			obj.SetNamespace(req.Namespace)
		}
	}
	return obj, nil
}

// stored reads the request's stored object on UPDATE when the kind asks for it; nil otherwise.
func stored[E any, T Object[E]](k Kind, req admission.Request) (T, error) {
	if !k.WithOld || req.Operation != admissionv1.Update {
		return nil, nil
	}
	return decodeOld[E, T](k, req)
}

func decodeOld[E any, T Object[E]](k Kind, req admission.Request) (T, error) {
	old := T(new(E))
	if err := k.Decoder.DecodeRaw(req.OldObject, old); err != nil {
		return nil, Refuse(http.StatusBadRequest, fmt.Errorf("decode old %s: %w", k.Name, err))
	}
	return old, nil
}

// createOrUpdate says whether the handlers look at req's operation at all.
func createOrUpdate(req admission.Request) bool {
	return req.Operation == admissionv1.Create || req.Operation == admissionv1.Update
}

// ListOthers lists into list, through reader, the objects of the kind in namespace ns (every
// namespace when ns is empty), for a check against the others; it fails with
// "list <kind>s: ...".
func (k Kind) ListOthers(ctx context.Context, reader client.Reader, list client.ObjectList, ns string) error {
	if err := reader.List(ctx, list, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("list %ss: %w", k.Name, err)
	}
	return nil
}

// Pod gets pod name of namespace through reader, for a handler that checks an object against
// the pods it names: nil and no error when there is no such pod, and an error saying
// "get pod <namespace>/<name>: ..." when the read fails.
func Pod(ctx context.Context, reader client.Reader, namespace, name string) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	err := reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, pod)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get pod %s/%s: %w", namespace, name, err)
	}
	return pod, nil
}

// AgainstOthers is a validation of an object against the others of its kind in its namespace,
// which it lists through reader on every request (items reads them out of the list), for
// Validating. validate gets the object, the stored one (nil on CREATE or without
// k.WithOld) and the others.
func AgainstOthers[E any, T Object[E], LE any, L interface {
	*LE
	client.ObjectList
}](k Kind, reader client.Reader, items func(L) []E, validate func(obj, old T, others []E) field.ErrorList) func(context.Context, T, T) (field.ErrorList, error) {
	return func(ctx context.Context, obj, old T) (field.ErrorList, error) {
		list := L(new(LE))
		if err := k.ListOthers(ctx, reader, list, obj.GetNamespace()); err != nil {
			return nil, err
		}
		return validate(obj, old, items(list)), nil
	}
}
