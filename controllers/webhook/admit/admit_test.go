package admit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"strings"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/features"
)

// outcome is what a test reads from a response.
type outcome struct {
	Allowed bool
	Code    int32
	Message string
	Patches []string
}

func outcomeOf(resp admission.Response) outcome {
	o := outcome{Allowed: resp.Allowed}
	if resp.Result != nil {
		o.Code, o.Message = resp.Result.Code, resp.Result.Message
	}
	for _, p := range resp.Patches {
		o.Patches = append(o.Patches, p.Operation+" "+p.Path)
	}
	return o
}

func configMap(ns string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns},
		Data:       data,
	}
}

func raw(t *testing.T, obj any) runtime.RawExtension {
	t.Helper()
	if obj == nil {
		return runtime.RawExtension{}
	}
	if s, ok := obj.(string); ok {
		return runtime.RawExtension{Raw: []byte(s)}
	}
	return runtime.RawExtension{Raw: webhooktest.JSON(t, obj)}
}

func request(t *testing.T, op admissionv1.Operation, ns string, obj, old any) admission.Request {
	t.Helper()
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: op, Namespace: ns, Name: "cm", Object: raw(t, obj), OldObject: raw(t, old),
	}}
}

func TestMutating(t *testing.T) {
	dec := admission.NewDecoder(clientgoscheme.Scheme)
	// defaults sets data.a, refuses a map holding "refuse", fails on "fail", and records
	// whether it saw the stored object.
	var sawOld bool
	defaults := func(_ context.Context, cm, old *corev1.ConfigMap) error {
		sawOld = old != nil
		switch {
		case cm.Data["refuse"] != "":
			return admit.Refuse(http.StatusForbidden, errors.New("spec.refuse: forbidden"))
		case cm.Data["fail"] != "":
			return errors.New("read something: unavailable")
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data["a"] = "1"
		return nil
	}
	defaulted := map[string]string{"a": "1"}
	tests := []struct {
		name       string
		kind       admit.Kind
		op         admissionv1.Operation
		ns         string
		obj, old   any
		want       outcome
		wantSawOld bool
	}{
		{
			name: "a create its defaults change is answered with a patch",
			op:   admissionv1.Create, obj: configMap("ns", nil),
			want: outcome{Allowed: true, Patches: []string{"add /data"}},
		},
		{
			name: "a create its defaults leave as it is is allowed without a patch",
			op:   admissionv1.Create, obj: configMap("ns", defaulted),
			want: outcome{Allowed: true, Code: 200},
		},
		{
			name: "a body that does not decode is refused as a bad request naming the kind",
			op:   admissionv1.Create, obj: `{"data":5}`,
			want: outcome{Code: 400, Message: "decode configmap: json: cannot unmarshal number into Go struct field ConfigMap.data of type map[string]string"},
		},
		{
			name: "an update hands the stored object over with WithOld",
			kind: admit.Kind{WithOld: true}, op: admissionv1.Update, obj: configMap("ns", defaulted), old: configMap("ns", defaulted),
			want: outcome{Allowed: true, Code: 200}, wantSawOld: true,
		},
		{
			name: "an update does not decode the stored object without WithOld",
			op:   admissionv1.Update, obj: configMap("ns", defaulted), old: `not json`,
			want: outcome{Allowed: true, Code: 200},
		},
		{
			name: "a stored object that does not decode is refused as a bad request naming it",
			kind: admit.Kind{WithOld: true}, op: admissionv1.Update, obj: configMap("ns", defaulted), old: `{"data":5}`,
			want: outcome{Code: 400, Message: "decode old configmap: json: cannot unmarshal number into Go struct field ConfigMap.data of type map[string]string"},
		},
		{
			name: "an error made with Refuse refuses with its code and its own message",
			op:   admissionv1.Create, obj: configMap("ns", map[string]string{"refuse": "x"}),
			want: outcome{Code: 403, Message: "spec.refuse: forbidden"},
		},
		{
			name: "any other error refuses with 500 and its own message",
			op:   admissionv1.Create, obj: configMap("ns", map[string]string{"fail": "x"}),
			want: outcome{Code: 500, Message: "read something: unavailable"},
		},
		{
			name: "a gate's refusal comes before anything is decoded",
			kind: admit.Kind{Gate: func() error { return admit.Refuse(http.StatusForbidden, errors.New("feature gate X is not enabled")) }},
			op:   admissionv1.Create, obj: `not json`,
			want: outcome{Code: 403, Message: "feature gate X is not enabled"},
		},
		{
			name: "a namespaced kind refuses an object in another namespace than the request's",
			kind: admit.Kind{Namespaced: true}, op: admissionv1.Create, ns: "other", obj: configMap("ns", nil),
			want: outcome{Code: 400, Message: `metadata.namespace: Invalid value: "ns": must be the namespace of the admission request, "other"`},
		},
		{
			name: "a namespaced kind's object that names no namespace takes the request's without a patch for it",
			kind: admit.Kind{Namespaced: true}, op: admissionv1.Create, obj: configMap("", defaulted),
			want: outcome{Allowed: true, Code: 200},
		},
		{
			name: "a delete is allowed as it is",
			op:   admissionv1.Delete, old: configMap("ns", nil),
			want: outcome{Allowed: true, Code: 200},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sawOld = false
			kind := tt.kind
			kind.Name, kind.Decoder = "configmap", dec
			ns := tt.ns
			if ns == "" {
				ns = "ns"
			}
			got := outcomeOf(admit.Mutating(kind, defaults).Handle(context.Background(), request(t, tt.op, ns, tt.obj, tt.old)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if sawOld != tt.wantSawOld {
				t.Errorf("defaults saw the stored object: %v, want %v", sawOld, tt.wantSawOld)
			}
		})
	}
}

func TestValidating(t *testing.T) {
	dec := admission.NewDecoder(clientgoscheme.Scheme)
	// validate refuses every key but "ok" as a field error, and reports the namespace it saw
	// and whether it saw the stored object.
	var seen string
	validate := func(_ context.Context, cm, old *corev1.ConfigMap) (field.ErrorList, error) {
		seen = fmt.Sprintf("namespace %q, old %v", cm.Namespace, old != nil)
		var errs field.ErrorList
		for k := range cm.Data {
			if k != "ok" {
				errs = append(errs, field.Invalid(field.NewPath("data").Key(k), cm.Data[k], "only ok is valid"))
			}
		}
		return errs, nil
	}
	// protect refuses the deletion of a map holding "keep".
	protect := func(old *corev1.ConfigMap) error {
		if old.Data["keep"] != "" {
			return errors.New("deletion of ConfigMap ns/cm forbidden")
		}
		return nil
	}
	deleting := configMap("ns", map[string]string{"bad": "x"})
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	tests := []struct {
		name       string
		kind       admit.Kind
		gates      string
		protected  bool
		op         admissionv1.Operation
		ns         string
		obj, old   any
		want       outcome
		wantSeen   string
		noValidate bool
	}{
		{
			name: "a valid object is allowed",
			op:   admissionv1.Create, obj: configMap("ns", map[string]string{"ok": "1"}),
			want: outcome{Allowed: true, Code: 200}, wantSeen: `namespace "ns", old false`,
		},
		{
			name: "field errors are refused as unprocessable with their aggregate",
			op:   admissionv1.Create, obj: configMap("ns", map[string]string{"bad": "x"}),
			want:     outcome{Code: 422, Message: `data[bad]: Invalid value: "x": only ok is valid`},
			wantSeen: `namespace "ns", old false`,
		},
		{
			name: "an update hands the stored object over with WithOld",
			kind: admit.Kind{WithOld: true}, op: admissionv1.Update, obj: configMap("ns", nil), old: configMap("ns", nil),
			want: outcome{Allowed: true, Code: 200}, wantSeen: `namespace "ns", old true`,
		},
		{
			name: "an object being deleted passes unchecked with PassDeleting",
			kind: admit.Kind{PassDeleting: true, WithOld: true}, op: admissionv1.Update, obj: deleting, old: `not json`,
			want: outcome{Allowed: true, Code: 200}, noValidate: true,
		},
		{
			name: "an object being deleted is checked without PassDeleting",
			op:   admissionv1.Update, obj: deleting,
			want:     outcome{Code: 422, Message: `data[bad]: Invalid value: "x": only ok is valid`},
			wantSeen: `namespace "ns", old false`,
		},
		{
			name: "a namespaced kind's object that names no namespace is validated in the request's",
			kind: admit.Kind{Namespaced: true}, op: admissionv1.Create, obj: configMap("", nil),
			want: outcome{Allowed: true, Code: 200}, wantSeen: `namespace "ns", old false`,
		},
		{
			name: "a namespaced kind refuses a request that names no namespace",
			kind: admit.Kind{Namespaced: true}, op: admissionv1.Create, ns: "-", obj: configMap("", nil),
			want:       outcome{Code: 400, Message: "metadata.namespace: Required value: the admission request must name the object's namespace"},
			noValidate: true,
		},
		{
			name: "a connect is allowed unchecked",
			op:   admissionv1.Connect, obj: `not json`,
			want: outcome{Allowed: true, Code: 200}, noValidate: true,
		},
		{
			name:  "a delete is allowed without deletion protection",
			gates: "ResourcesDeletionProtection=true", op: admissionv1.Delete, old: configMap("ns", map[string]string{"keep": "1"}),
			want: outcome{Allowed: true, Code: 200}, noValidate: true,
		},
		{
			name:  "a protected deletion is forbidden with ResourcesDeletionProtection on",
			gates: "ResourcesDeletionProtection=true", protected: true, op: admissionv1.Delete, old: configMap("ns", map[string]string{"keep": "1"}),
			want: outcome{Code: 403, Message: "deletion of ConfigMap ns/cm forbidden"}, noValidate: true,
		},
		{
			name:      "a protected deletion is allowed with ResourcesDeletionProtection at its default, off",
			protected: true, op: admissionv1.Delete, old: configMap("ns", map[string]string{"keep": "1"}),
			want: outcome{Allowed: true, Code: 200}, noValidate: true,
		},
		{
			name:  "a deletion without the stored object is allowed",
			gates: "ResourcesDeletionProtection=true", protected: true, op: admissionv1.Delete,
			want: outcome{Allowed: true, Code: 200}, noValidate: true,
		},
		{
			name:  "a deleted object that does not decode is refused as a bad request naming it",
			gates: "ResourcesDeletionProtection=true", protected: true, op: admissionv1.Delete, old: `{"data":5}`,
			want:       outcome{Code: 400, Message: "decode old configmap: json: cannot unmarshal number into Go struct field ConfigMap.data of type map[string]string"},
			noValidate: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen = ""
			gates := features.NewGate()
			if tt.gates != "" {
				if err := gates.Set(tt.gates); err != nil {
					t.Fatal(err)
				}
			}
			kind := tt.kind
			kind.Name, kind.Decoder = "configmap", dec
			h := admit.Validating(kind, validate)
			if tt.protected {
				h = h.ProtectDeletion(deletionprotection.NewGuard(gates, nil, false), protect)
			}
			ns := tt.ns
			switch ns {
			case "":
				ns = "ns"
			case "-":
				ns = ""
			}
			got := outcomeOf(h.Handle(context.Background(), request(t, tt.op, ns, tt.obj, tt.old)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if tt.noValidate && seen != "" {
				t.Errorf("validate ran (%s), want it not asked", seen)
			}
			if !tt.noValidate && seen != tt.wantSeen {
				t.Errorf("validate saw %s, want %s", seen, tt.wantSeen)
			}
		})
	}
}

func TestJSONDecodesWhateverVersionTheObjectNames(t *testing.T) {
	cm := &corev1.ConfigMap{}
	if err := admit.JSON.DecodeRaw(runtime.RawExtension{Raw: []byte(`{"apiVersion":"v9","kind":"Other","data":{"a":"1"}}`)}, cm); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"a": "1"}, cm.Data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
}

func TestPureHandsTheObjectsOver(t *testing.T) {
	v := admit.Pure(func(obj, old *corev1.ConfigMap) field.ErrorList {
		return field.ErrorList{field.Invalid(field.NewPath("data"), fmt.Sprint(len(obj.Data), old == nil), "counted")}
	})
	errs, err := v(context.Background(), configMap("ns", map[string]string{"a": "1"}), nil)
	if err != nil || errs.ToAggregate().Error() != `data: Invalid value: "1 true": counted` {
		t.Errorf("got %v, %v", errs, err)
	}
}

func TestPureHandlersServeTheEnvsKindWithTheirOptions(t *testing.T) {
	env := admit.Env{Kind: admit.Kind{Name: "configmap", Decoder: admission.NewDecoder(clientgoscheme.Scheme)}}
	// refuse refuses every object, and records whether it was handed the stored one.
	var sawOld bool
	refuse := func(_, old *corev1.ConfigMap) field.ErrorList {
		sawOld = old != nil
		return field.ErrorList{field.Forbidden(field.NewPath("data"), "refused")}
	}
	refused := outcome{Code: 422, Message: "data: Forbidden: refused"}
	update := request(t, admissionv1.Update, "ns", configMap("ns", nil), configMap("ns", nil))
	deleting := configMap("ns", nil)
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	tests := []struct {
		name       string
		handler    func(admit.Env) admission.Handler
		req        admission.Request
		want       outcome
		wantSawOld bool
	}{
		{name: "without options the stored object is not handed over", handler: admit.PureValidating(refuse), req: update, want: refused},
		{name: "ReadOld hands the stored object over", handler: admit.PureValidating(refuse, admit.ReadOld), req: update, want: refused, wantSawOld: true},
		{name: "an object being deleted is checked without LetDeletingPass", handler: admit.PureValidating(refuse),
			req: request(t, admissionv1.Update, "ns", deleting, nil), want: refused},
		{name: "LetDeletingPass admits an object being deleted unchecked", handler: admit.PureValidating(refuse, admit.LetDeletingPass),
			req: request(t, admissionv1.Update, "ns", deleting, nil), want: outcome{Allowed: true, Code: 200}},
		{name: "PureDefaulting patches what the defaults set", handler: admit.PureDefaulting(func(cm *corev1.ConfigMap) { cm.Data = map[string]string{"ok": "1"} }),
			req: request(t, admissionv1.Create, "ns", configMap("ns", nil), nil), want: outcome{Allowed: true, Patches: []string{"add /data"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sawOld = false
			got := outcomeOf(tt.handler(env).Handle(context.Background(), tt.req))
			if diff := cmp.Diff([]any{tt.want, tt.wantSawOld}, []any{got, sawOld}); diff != "" {
				t.Errorf("outcome, saw old (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequireGatesRefusesNamingTheFirstGateOff(t *testing.T) {
	gates := features.NewGate()
	if err := gates.Set("ImagePullJobGate=true,KruiseDaemon=false"); err != nil {
		t.Fatal(err)
	}
	if err := admit.RequireGates(gates, features.ImagePullJobGate, features.PodWebhook); err != nil {
		t.Errorf("gates on: got %v, want none", err)
	}
	dec := admission.NewDecoder(clientgoscheme.Scheme)
	h := admit.Validating(admit.Kind{Name: "configmap", Decoder: dec}, func(context.Context, *corev1.ConfigMap, *corev1.ConfigMap) (field.ErrorList, error) {
		return nil, admit.RequireGates(gates, features.ImagePullJobGate, features.KruiseDaemon, features.PodProbeMarkerGate)
	})
	got := outcomeOf(h.Handle(context.Background(), request(t, admissionv1.Create, "ns", configMap("ns", nil), nil)))
	if got.Code != 403 || !strings.HasPrefix(got.Message, "feature-gate KruiseDaemon is not enabled: kruise-daemon is off") || !strings.Contains(got.Message, "daemon.enabled=true") {
		t.Errorf("refusal %+v: want 403 with 1.8's words, then how to turn the daemon on", got)
	}
	if msg := admit.GateOff(features.ImagePullJobGate).Error(); !strings.HasPrefix(msg, "feature-gate ImagePullJobGate is not enabled: ") || !strings.Contains(msg, "featureGates=ImagePullJobGate=true") {
		t.Errorf("refusal for a gate %q: want 1.8's words, then the value that turns it on", msg)
	}
}

func TestValidateReadsTheRequestFromItsContext(t *testing.T) {
	dec := admission.NewDecoder(clientgoscheme.Scheme)
	var user string
	h := admit.Validating(admit.Kind{Name: "configmap", Decoder: dec}, func(ctx context.Context, _, _ *corev1.ConfigMap) (field.ErrorList, error) {
		req, err := admission.RequestFromContext(ctx)
		user = req.UserInfo.Username
		return nil, err
	})
	req := request(t, admissionv1.Create, "ns", configMap("ns", nil), nil)
	req.UserInfo.Username = "alice"
	if got := outcomeOf(h.Handle(context.Background(), req)); !got.Allowed {
		t.Fatalf("answer %+v, want allowed", got)
	}
	if user != "alice" {
		t.Errorf("validate read user %q from its context, want alice", user)
	}
}

// failingReader fails every read.
type failingReader struct{ client.Reader }

func (failingReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return errors.New("apiserver down")
}

func TestPodGetsAPodOfTheNamespaceOrSaysThereIsNone(t *testing.T) {
	reader := webhooktest.Reader(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns"}})
	tests := map[string]struct {
		reader    client.Reader
		namespace string
		wantPod   bool
		wantErr   string
	}{
		"a pod of the namespace is returned":                      {reader: reader, namespace: "ns", wantPod: true},
		"a pod of another namespace is none, without an error":    {reader: reader, namespace: "other"},
		"a failed read is an error naming the pod it was reading": {reader: failingReader{}, namespace: "ns", wantErr: "get pod ns/web-0: apiserver down"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			pod, err := admit.Pod(context.Background(), tt.reader, tt.namespace, "web-0")
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff([]any{tt.wantPod, tt.wantErr}, []any{pod != nil, gotErr}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
