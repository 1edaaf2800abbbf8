package configuration

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestPatcherReconcile(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	crd := func(name string, strategy apiextensionsv1.ConversionStrategyType) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       apiextensionsv1.CustomResourceDefinitionSpec{Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: strategy}},
		}
	}
	type state struct {
		Mutating, Validating []string // webhook name -> url
		CRDs                 map[string]string
	}
	cases := map[string]struct {
		ca        []byte
		served    map[string]bool
		wantState state
	}{
		"every served webhook and every Webhook-converted CRD of ours gets the CA and URL": {
			ca: []byte("ca"),
			wantState: state{
				Mutating: []string{"mcloneset.kb.io ca https://127.0.0.1:9876/mutate-apps-kruise-io-v1alpha1-cloneset",
					"mstatefulset.kb.io ca https://127.0.0.1:9876/mutate-apps-kruise-io-statefulset",
					"mdaemonset.kb.io ca https://127.0.0.1:9876/mutate-apps-kruise-io-v1alpha1-daemonset",
					"muniteddeployment.kb.io ca https://127.0.0.1:9876/mutate-apps-kruise-io-v1alpha1-uniteddeployment",
					"msidecarset.kb.io ca https://127.0.0.1:9876/mutate-apps-kruise-io-v1alpha1-sidecarset", "mpod.kb.io ca https://127.0.0.1:9876/mutate-pod",
					"mbroadcastjob.kb.io ca https://127.0.0.1:9876/mutate-apps-kruise-io-v1alpha1-broadcastjob",
					"mcontainerrecreaterequest.kb.io ca https://127.0.0.1:9876/mutate-apps-kruise-io-v1alpha1-containerrecreaterequest",
					"mimagepulljob.kb.io ca https://127.0.0.1:9876/mutate-apps-kruise-io-v1alpha1-imagepulljob",
					"mimagelistpulljob.kb.io ca https://127.0.0.1:9876/mutate-apps-kruise-io-v1alpha1-imagelistpulljob",
					"mnodeimage.kb.io ca https://127.0.0.1:9876/mutate-apps-kruise-io-v1alpha1-nodeimage",
					"madvancedcronjob.kb.io ca https://127.0.0.1:9876/mutate-apps-kruise-io-v1alpha1-advancedcronjob"},
				Validating: []string{"vcloneset.kb.io ca https://127.0.0.1:9876/validate-apps-kruise-io-v1alpha1-cloneset",
					"vstatefulset.kb.io ca https://127.0.0.1:9876/validate-apps-kruise-io-statefulset",
					"vdaemonset.kb.io ca https://127.0.0.1:9876/validate-apps-kruise-io-v1alpha1-daemonset",
					"vuniteddeployment.kb.io ca https://127.0.0.1:9876/validate-apps-kruise-io-v1alpha1-uniteddeployment",
					"vbuiltindeployment.kb.io ca https://127.0.0.1:9876/validate-apps-deployment",
					"vbuiltinreplicaset.kb.io ca https://127.0.0.1:9876/validate-apps-replicaset",
					"vbuiltinstatefulset.kb.io ca https://127.0.0.1:9876/validate-apps-statefulset",
					"vcustomresourcedefinition.kb.io ca https://127.0.0.1:9876/validate-customresourcedefinition",
					"vnamespace.kb.io ca https://127.0.0.1:9876/validate-namespace",
					"vservice.kb.io ca https://127.0.0.1:9876/validate-service",
					"vingress.kb.io ca https://127.0.0.1:9876/validate-ingress",
					"vsidecarset.kb.io ca https://127.0.0.1:9876/validate-apps-kruise-io-v1alpha1-sidecarset",
					"vbroadcastjob.kb.io ca https://127.0.0.1:9876/validate-apps-kruise-io-v1alpha1-broadcastjob",
					"vimagepulljob.kb.io ca https://127.0.0.1:9876/validate-apps-kruise-io-v1alpha1-imagepulljob",
					"vpodprobemarker.kb.io ca https://127.0.0.1:9876/validate-apps-kruise-io-podprobemarker",
					"vimagelistpulljob.kb.io ca https://127.0.0.1:9876/validate-apps-kruise-io-v1alpha1-imagelistpulljob",
					"vnodeimage.kb.io ca https://127.0.0.1:9876/validate-apps-kruise-io-v1alpha1-nodeimage",
					"vpod.kb.io ca https://127.0.0.1:9876/validate-pod",
					"vpodeviction.kb.io ca https://127.0.0.1:9876/validate-pod",
					"vpodunavailablebudget.kb.io ca https://127.0.0.1:9876/validate-policy-kruise-io-podunavailablebudget",
					"vworkloadspread.kb.io ca https://127.0.0.1:9876/validate-apps-kruise-io-v1alpha1-workloadspread",
					"vresourcedistribution.kb.io ca https://127.0.0.1:9876/validate-apps-kruise-io-v1alpha1-resourcedistribution",
					"vpersistentpodstate.kb.io ca https://127.0.0.1:9876/validate-apps-kruise-io-persistentpodstate",
					"vadvancedcronjob.kb.io ca https://127.0.0.1:9876/validate-apps-kruise-io-v1alpha1-advancedcronjob",
					"vephemeraljobs.kb.io ca https://127.0.0.1:9876/validate-apps-kruise-io-v1alpha1-ephemeraljob"},
				CRDs: map[string]string{"statefulsets.apps.kruise.io": "ca https://127.0.0.1:9876/convert", "clonesets.apps.kruise.io": "none", "widgets.example.com": "none"},
			},
		},
		"a webhook without a handler is dropped": {
			ca:     []byte("ca"),
			served: map[string]bool{"/mutate-pod": true},
			wantState: state{
				Mutating: []string{"mpod.kb.io ca https://127.0.0.1:9876/mutate-pod"},
				CRDs:     map[string]string{"statefulsets.apps.kruise.io": "ca https://127.0.0.1:9876/convert", "clonesets.apps.kruise.io": "none", "widgets.example.com": "none"},
			},
		},
		"nothing is written before the CA is known": {
			wantState: state{
				Mutating: []string{"mcloneset.kb.io  svc", "mstatefulset.kb.io  svc", "mdaemonset.kb.io  svc", "muniteddeployment.kb.io  svc", "msidecarset.kb.io  svc", "mpod.kb.io  svc", "mbroadcastjob.kb.io  svc", "mcontainerrecreaterequest.kb.io  svc", "mimagepulljob.kb.io  svc", "mimagelistpulljob.kb.io  svc", "mnodeimage.kb.io  svc", "madvancedcronjob.kb.io  svc"},
				Validating: []string{"vcloneset.kb.io  svc", "vstatefulset.kb.io  svc", "vdaemonset.kb.io  svc", "vuniteddeployment.kb.io  svc", "vbuiltindeployment.kb.io  svc", "vbuiltinreplicaset.kb.io  svc", "vbuiltinstatefulset.kb.io  svc", "vcustomresourcedefinition.kb.io  svc", "vnamespace.kb.io  svc", "vservice.kb.io  svc", "vingress.kb.io  svc", "vsidecarset.kb.io  svc", "vbroadcastjob.kb.io  svc", "vimagepulljob.kb.io  svc", "vpodprobemarker.kb.io  svc", "vimagelistpulljob.kb.io  svc", "vnodeimage.kb.io  svc",
					"vpod.kb.io  svc", "vpodeviction.kb.io  svc", "vpodunavailablebudget.kb.io  svc", "vworkloadspread.kb.io  svc", "vresourcedistribution.kb.io  svc", "vpersistentpodstate.kb.io  svc",
					"vadvancedcronjob.kb.io  svc", "vephemeraljobs.kb.io  svc"},
				CRDs: map[string]string{"statefulsets.apps.kruise.io": "none", "clonesets.apps.kruise.io": "none", "widgets.example.com": "none"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, v := Desired(Target{Namespace: "kruise-system"})
			widgets := crd("widgets.example.com", apiextensionsv1.WebhookConverter)
			widgets.Spec.Conversion.Webhook = &apiextensionsv1.WebhookConversion{ClientConfig: &apiextensionsv1.WebhookClientConfig{URL: ptr.To("https://elsewhere/convert")}}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(m, v,
				crd("statefulsets.apps.kruise.io", apiextensionsv1.WebhookConverter),
				crd("clonesets.apps.kruise.io", apiextensionsv1.NoneConverter), widgets).Build()
			p := &Patcher{
				Client: c, CABundle: func() []byte { return tc.ca },
				Target: Target{Namespace: "kruise-system", Host: "127.0.0.1", Port: 9876},
			}
			if tc.served != nil {
				p.Served = func(path string) bool { return tc.served[path] }
			}
			if _, err := p.Reconcile(context.Background(), everything); err != nil {
				t.Fatal(err)
			}
			got := state{CRDs: map[string]string{}}
			describe := func(name string, cc admissionregistrationv1.WebhookClientConfig) string {
				where := "svc"
				if cc.URL != nil {
					where = *cc.URL
				}
				return name + " " + string(cc.CABundle) + " " + where
			}
			gotM := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := c.Get(context.Background(), client.ObjectKey{Name: MutatingName}, gotM); err != nil {
				t.Fatal(err)
			}
			for _, w := range gotM.Webhooks {
				got.Mutating = append(got.Mutating, describe(w.Name, w.ClientConfig))
			}
			gotV := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if err := c.Get(context.Background(), client.ObjectKey{Name: ValidatingName}, gotV); err != nil {
				t.Fatal(err)
			}
			for _, w := range gotV.Webhooks {
				got.Validating = append(got.Validating, describe(w.Name, w.ClientConfig))
			}
			crds := &apiextensionsv1.CustomResourceDefinitionList{}
			if err := c.List(context.Background(), crds); err != nil {
				t.Fatal(err)
			}
			for _, d := range crds.Items {
				desc := "none"
				if d.Spec.Conversion.Webhook != nil && d.Name != "widgets.example.com" {
					cc := d.Spec.Conversion.Webhook.ClientConfig
					desc = string(cc.CABundle) + " " + ptr.Deref(cc.URL, "svc")
				}
				if d.Name == "widgets.example.com" && ptr.Deref(d.Spec.Conversion.Webhook.ClientConfig.URL, "") != "https://elsewhere/convert" {
					desc = "touched"
				}
				got.CRDs[d.Name] = desc
			}
			if diff := cmp.Diff(tc.wantState, got); diff != "" {
				t.Errorf("state after a pass (-want +got):\n%s", diff)
			}
		})
	}
}
