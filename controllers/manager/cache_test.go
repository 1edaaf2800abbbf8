package manager

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// cached is what the cache stores of in: the transform of in's kind, or the default one.
func cached(t *testing.T, in client.Object) client.Object {
	t.Helper()
	opts := NewOptions().cacheOptions()
	transform := opts.DefaultTransform
	for obj, by := range opts.ByObject {
		if reflect.TypeOf(obj) == reflect.TypeOf(in) && by.Transform != nil {
			transform = by.Transform
		}
	}
	out, err := transform(in.DeepCopyObject())
	if err != nil {
		t.Fatal(err)
	}
	return out.(client.Object)
}

func TestTheCacheDropsWhatNoControllerReads(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	lastApplied := map[string]string{lastAppliedAnnotation: `{"huge":"object"}`, "keep": "me"}
	schema := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}
	conversion := &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{ClientConfig: &apiextensionsv1.WebhookClientConfig{CABundle: []byte("ca")}}}
	crd := func(schema *apiextensionsv1.CustomResourceValidation, annotations map[string]string, managed []metav1.ManagedFieldsEntry) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "clonesets.apps.kruise.io", ResourceVersion: "7", Annotations: annotations, ManagedFields: managed},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "apps.kruise.io", Conversion: conversion,
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", Served: true, Storage: true, Schema: schema}}},
		}
	}
	ready := []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	node := func(images []corev1.ContainerImage) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"zone": "a"}},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{Conditions: ready, Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")},
				Images: images}}
	}
	revision := func(ownerAPIVersion string, data []byte) *appsv1.ControllerRevision {
		rev := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Namespace: "ns"}, Revision: 2, Data: runtime.RawExtension{Raw: data}}
		if ownerAPIVersion != "" {
			rev.OwnerReferences = []metav1.OwnerReference{{APIVersion: ownerAPIVersion, Kind: "X", Name: "web", UID: "u", Controller: ptr.To(true)}}
		}
		return rev
	}
	tmpl := []byte(`{"spec":{"template":{}}}`)
	type tcase struct {
		in, want client.Object
	}
	cases := map[string]tcase{
		"a CRD is stored without its schemas, last-applied annotation and managedFields, its name and conversion kept": {
			in: crd(schema, lastApplied, managed), want: crd(nil, map[string]string{"keep": "me"}, nil),
		},
		"a Node is stored without status.images, its labels, taints, conditions and allocatable kept": {
			in: node([]corev1.ContainerImage{{Names: []string{"nginx:1"}, SizeBytes: 1}}), want: node(nil),
		},
		"a revision a native StatefulSet controls is stored without its data": {
			in: revision("apps/v1", tmpl), want: revision("apps/v1", nil),
		},
		"a revision no one controls is stored without its data": {
			in: revision("", tmpl), want: revision("", nil),
		},
		"a revision a CloneSet controls keeps its data": {
			in: revision("apps.kruise.io/v1alpha1", tmpl), want: revision("apps.kruise.io/v1alpha1", tmpl),
		},
		"a revision a PodUnavailableBudget's group controls keeps its data": {
			in: revision("policy.kruise.io/v1alpha1", tmpl), want: revision("policy.kruise.io/v1alpha1", tmpl),
		},
		"a pod keeps its annotations, last-applied included, and loses only its managedFields": {
			in:   &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: lastApplied, ManagedFields: managed}},
			want: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: lastApplied}},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		if d := cmp.Diff(tc.want, cached(t, tc.in)); d != "" {
			t.Errorf("cached object (-want +got):\n%s", d)
		}
	})
}

func TestTheManagersClientAsksForUncompressedResponses(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Accept-Encoding")
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	o := NewOptions()
	cfg := o.restConfig(&rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
	if cfg.QPS != o.QPS || cfg.Burst != o.Burst {
		t.Errorf("client rate limits %v/%d, want the options' %v/%d", cfg.QPS, cfg.Burst, o.QPS, o.Burst)
	}
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(srv.URL + "/api")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if enc := <-got; enc != "" {
		t.Errorf("the manager's request carried Accept-Encoding %q, want none: the apiserver would gzip every watch", enc)
	}
}
