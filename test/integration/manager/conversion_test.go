package manager

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/webhook"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/configuration"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// v1beta1Only is an Advanced StatefulSet using fields 1.8's v1alpha1 schema lacks.
func v1beta1Only(ns string) *appsv1beta1.StatefulSet {
	labels := map[string]string{"app": "convert"}
	return &appsv1beta1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "convert", Labels: map[string]string{"team": "a"}},
		Spec: appsv1beta1.StatefulSetSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example.com/app:v1"}}},
			},
			ReserveOrdinals: []intstr.IntOrString{intstr.FromInt32(1)},
			Lifecycle:       &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{FinalizersHandler: []string{"example.com/hold"}}},
			PersistentVolumeClaimRetentionPolicy: &appsv1beta1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1beta1.DeletePersistentVolumeClaimRetentionPolicyType,
				WhenScaled:  appsv1beta1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
		},
	}
}

// TestStatefulSetConvertsBetweenVersionsThroughTheWebhook: with the StatefulSet CRD's conversion
// set to Webhook (as OpenKruise 1.8's chart installs it), the apiserver converts through the
// manager's /convert: an Advanced StatefulSet written as v1beta1 reads as v1alpha1 with the same
// spec, an update through v1alpha1 keeps the v1beta1-only fields, and a ConversionReview posted
// to /convert is answered with the request's uid and the objects in the desired version.
func TestStatefulSetConvertsBetweenVersionsThroughTheWebhook(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "convert-", nil)
	ctx := context.Background()
	o := testOptions(t, ns)
	o.Webhooks = manager.NewOptions().Webhooks
	installConfigurations(t, configuration.Target{Namespace: ns})
	switchToWebhookConversion(t, ns)
	startManager(t, env.Config, o)
	waitReady(t, o)
	var s *corev1.Secret
	framework.Eventually(t, framework.Medium, "caBundle and URL patched into the CRD's conversion", func(context.Context) error {
		var err error
		if s, err = secret(ns); err != nil {
			return err
		}
		return patchedEverywhere(s.Data["ca-cert.pem"], o.WebhookPort)
	})

	beta := v1beta1Only(ns)
	framework.Create(t, env.Client, beta)
	alpha := &appsv1alpha1.StatefulSet{}
	// The apiserver may still hold a connection to the conversion webhook from before the
	// patch; the first reads can fail while it picks up the new clientConfig.
	framework.Eventually(t, framework.Medium, "v1beta1 object read as v1alpha1", func(ctx context.Context) error {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(beta), alpha)
	})
	testkit.Diff(t, "spec read as v1alpha1", beta.Spec, alpha.Spec)

	alpha.Labels["team"] = "b"
	alpha.Spec.UpdateStrategy.RollingUpdate = &appsv1beta1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](2)}
	if err := env.Client.Update(ctx, alpha); err != nil {
		t.Fatalf("update through v1alpha1: %v", err)
	}
	back := &appsv1beta1.StatefulSet{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(beta), back); err != nil {
		t.Fatal(err)
	}
	// The defaulting webhook fills the rest of the new rollingUpdate; the v1beta1-only fields
	// must come back as they were written.
	want := beta.Spec.DeepCopy()
	want.UpdateStrategy = back.Spec.UpdateStrategy
	testkit.Diff(t, "spec read back as v1beta1 after the v1alpha1 update", *want, back.Spec)
	testkit.Diff(t, "partition written through v1alpha1", int32(2), ptr.Deref(back.Spec.UpdateStrategy.RollingUpdate.Partition, -1))
	testkit.Diff(t, "label written through v1alpha1", "b", back.Labels["team"])

	// The review as the apiserver sends it.
	raw, err := json.Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	review := apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Request: &apiextensionsv1.ConversionRequest{UID: "review-1", DesiredAPIVersion: "apps.kruise.io/v1alpha1",
			Objects: []runtime.RawExtension{{Raw: withGVK(t, raw, "apps.kruise.io/v1beta1")}}},
	}
	body, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := webhookClient(t, ns).Post(configuration.URL("127.0.0.1", o.WebhookPort, webhook.ConvertPath), "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	got := apiextensionsv1.ConversionReview{}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatalf("decode the answer (HTTP %d): %v", resp.StatusCode, err)
	}
	if got.Response == nil {
		t.Fatalf("answer without a response: %+v", got)
	}
	testkit.Diff(t, "response uid", review.Request.UID, got.Response.UID)
	testkit.Diff(t, "result", metav1.StatusSuccess, got.Response.Result.Status)
	if len(got.Response.ConvertedObjects) != 1 {
		t.Fatalf("%d converted objects, want 1", len(got.Response.ConvertedObjects))
	}
	converted := &appsv1alpha1.StatefulSet{}
	if err := json.Unmarshal(got.Response.ConvertedObjects[0].Raw, converted); err != nil {
		t.Fatal(err)
	}
	testkit.Diff(t, "converted apiVersion", "apps.kruise.io/v1alpha1", converted.APIVersion)
	testkit.Diff(t, "converted spec", back.Spec, converted.Spec)
}

// withGVK sets apiVersion and kind on a JSON object, as stored objects carry them.
func withGVK(t *testing.T, raw []byte, apiVersion string) []byte {
	t.Helper()
	obj := map[string]any{}
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	obj["apiVersion"], obj["kind"] = apiVersion, "StatefulSet"
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
