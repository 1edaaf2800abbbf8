package admit

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

func TestWebhooksServeAtTheirPaths(t *testing.T) {
	allow := func(Env) admission.Handler { return admission.HandlerFunc(nil) }
	tests := []struct {
		name      string
		w         Webhooks
		wantPaths []string
	}{
		{
			name:      "a versioned kind with both handlers is served at /mutate- and /validate-<group>-<version>-<name>",
			w:         Webhooks{Group: "apps.kruise.io", Version: "v1alpha1", Name: "cloneset", Mutating: allow, Validating: allow},
			wantPaths: []string{"/mutate-apps-kruise-io-v1alpha1-cloneset", "/validate-apps-kruise-io-v1alpha1-cloneset"},
		},
		{
			name:      "a kind without a version is served without one, and a nil handler not at all",
			w:         Webhooks{Group: "policy.kruise.io", Name: "podunavailablebudget", Validating: allow},
			wantPaths: []string{"/validate-policy-kruise-io-podunavailablebudget"},
		},
		{
			name:      "a core kind is served at /mutate- and /validate-<name>",
			w:         Webhooks{Name: "pod", Mutating: allow, Validating: allow},
			wantPaths: []string{"/mutate-pod", "/validate-pod"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range []string{tt.w.MutatingPath(), tt.w.ValidatingPath()} {
				if _, ok := tt.w.Handlers(nil, setup.Deps{})[p]; ok {
					got = append(got, p)
				}
			}
			if diff := cmp.Diff(tt.wantPaths, got); diff != "" {
				t.Errorf("served paths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWebhooksHandTheKindItsName(t *testing.T) {
	var got Kind
	Webhooks{Group: "apps.kruise.io", Name: "statefulset", Mutating: func(e Env) admission.Handler {
		got = e.Kind
		return nil
	}}.Handlers(nil, setup.Deps{})
	if got.Name != "statefulset" || got.Decoder != nil {
		t.Errorf("Env.Kind = %+v, want the name statefulset and no decoder without a manager", got)
	}
}

func TestAgainstOthersValidatesAgainstTheObjectsNamespace(t *testing.T) {
	cm := func(ns, name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	reader := fake.NewClientBuilder().WithObjects(cm("a", "one"), cm("a", "two"), cm("b", "three")).Build()
	var gotOld *corev1.ConfigMap
	var gotOthers []string
	validate := AgainstOthers(Kind{Name: "configmap"}, reader,
		func(l *corev1.ConfigMapList) []corev1.ConfigMap { return l.Items },
		func(_, old *corev1.ConfigMap, others []corev1.ConfigMap) field.ErrorList {
			gotOld = old
			for _, o := range others {
				gotOthers = append(gotOthers, o.Namespace+"/"+o.Name)
			}
			return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), "x", "taken")}
		})
	old := cm("a", "new")
	errs, err := validate(context.Background(), cm("a", "new"), old)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a/one", "a/two"}, gotOthers); diff != "" {
		t.Errorf("others (-want +got):\n%s", diff)
	}
	if gotOld != old {
		t.Errorf("old = %v, want the stored object passed through", gotOld)
	}
	if len(errs) != 1 {
		t.Errorf("errors = %v, want validate's one error returned", errs)
	}
}

func TestListOthersListsOneNamespaceOrAll(t *testing.T) {
	cm := func(ns, name string) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	reader := fake.NewClientBuilder().WithObjects(cm("a", "one"), cm("a", "two"), cm("b", "three")).Build()
	k := Kind{Name: "configmap"}
	for _, tt := range []struct {
		name, ns  string
		wantCount int
	}{
		{name: "a namespace lists only its own", ns: "a", wantCount: 2},
		{name: "no namespace lists every one", ns: "", wantCount: 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			list := &corev1.ConfigMapList{}
			if err := k.ListOthers(context.Background(), reader, list, tt.ns); err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != tt.wantCount {
				t.Errorf("listed %d, want %d", len(list.Items), tt.wantCount)
			}
		})
	}
}
