package manager

import (
	"context"
	"fmt"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/configuration"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// TestConversionPatchKeepsTheCRDsSchemas: the manager caches CRDs without their schemas, yet
// its patch of a CRD's conversion leaves every version's schema on the apiserver as it was.
func TestConversionPatchKeepsTheCRDsSchemas(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "crdtrim-", nil)
	o := testOptions(t, ns)
	before := framework.Get[apiextensionsv1.CustomResourceDefinition](t, env.Client, client.ObjectKey{Name: conversionCRD})
	installConfigurations(t, configuration.Target{Namespace: ns})
	switchToWebhookConversion(t, ns)
	startManager(t, env.Config, o)
	waitReady(t, o)

	framework.Eventually(t, framework.Medium, "the CRD's conversion patched with the manager's CA", func(ctx context.Context) error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: conversionCRD}, crd); err != nil {
			return err
		}
		if cc := crd.Spec.Conversion.Webhook.ClientConfig; cc == nil || len(cc.CABundle) == 0 || cc.URL == nil {
			return fmt.Errorf("conversion client config %+v not patched yet", cc)
		}
		return nil
	})
	after := framework.Get[apiextensionsv1.CustomResourceDefinition](t, env.Client, client.ObjectKey{Name: conversionCRD})
	if len(after.Spec.Versions) != len(before.Spec.Versions) {
		t.Fatalf("versions after the patch: %d, want %d", len(after.Spec.Versions), len(before.Spec.Versions))
	}
	for i, v := range after.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil || len(v.Schema.OpenAPIV3Schema.Properties) == 0 {
			t.Errorf("version %s lost its schema in the patch", v.Name)
		}
		if v.Name != before.Spec.Versions[i].Name {
			t.Errorf("version %d is %s after the patch, want %s", i, v.Name, before.Spec.Versions[i].Name)
		}
	}
}
