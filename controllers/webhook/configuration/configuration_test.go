package configuration

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/ptr"

	"github.com/kruise-addon/kruise-addon/features"
)

type entry struct {
	Name, Path string
	Pod        bool
}

func entries(ws []Webhook) []entry {
	var out []entry
	for _, w := range ws {
		out = append(out, entry{w.Name, w.Path, w.PodWebhook})
	}
	return out
}

func TestWebhooksTable(t *testing.T) {
	cases := map[string]struct {
		got, want []entry
	}{
		"the mutating webhooks are CloneSet, StatefulSet, DaemonSet, UnitedDeployment, SidecarSet, pods, BroadcastJob, ContainerRecreateRequest, ImagePullJob, ImageListPullJob, NodeImage and AdvancedCronJob, with 1.8 names and paths": {
			got: entries(Webhooks().Mutating),
			want: []entry{
				{"mcloneset.kb.io", "/mutate-apps-kruise-io-v1alpha1-cloneset", false},
				{"mstatefulset.kb.io", "/mutate-apps-kruise-io-statefulset", false},
				{"mdaemonset.kb.io", "/mutate-apps-kruise-io-v1alpha1-daemonset", false},
				{"muniteddeployment.kb.io", "/mutate-apps-kruise-io-v1alpha1-uniteddeployment", false},
				{"msidecarset.kb.io", "/mutate-apps-kruise-io-v1alpha1-sidecarset", false},
				{"mpod.kb.io", "/mutate-pod", true},
				{"mbroadcastjob.kb.io", "/mutate-apps-kruise-io-v1alpha1-broadcastjob", false},
				{"mcontainerrecreaterequest.kb.io", "/mutate-apps-kruise-io-v1alpha1-containerrecreaterequest", false},
				{"mimagepulljob.kb.io", "/mutate-apps-kruise-io-v1alpha1-imagepulljob", false},
				{"mimagelistpulljob.kb.io", "/mutate-apps-kruise-io-v1alpha1-imagelistpulljob", false},
				{"mnodeimage.kb.io", "/mutate-apps-kruise-io-v1alpha1-nodeimage", false},
				{"madvancedcronjob.kb.io", "/mutate-apps-kruise-io-v1alpha1-advancedcronjob", false},
			},
		},
		"the validating webhooks are CloneSet, StatefulSet, DaemonSet, UnitedDeployment, deletion protection of Kubernetes' kinds, SidecarSet, BroadcastJob, ImagePullJob, PodProbeMarker, ImageListPullJob, NodeImage, pod, pod eviction, PodUnavailableBudget, WorkloadSpread, ResourceDistribution and PersistentPodState, with 1.8 names and paths": {
			got: entries(Webhooks().Validating),
			want: []entry{
				{"vcloneset.kb.io", "/validate-apps-kruise-io-v1alpha1-cloneset", false},
				{"vstatefulset.kb.io", "/validate-apps-kruise-io-statefulset", false},
				{"vdaemonset.kb.io", "/validate-apps-kruise-io-v1alpha1-daemonset", false},
				{"vuniteddeployment.kb.io", "/validate-apps-kruise-io-v1alpha1-uniteddeployment", false},
				{"vbuiltindeployment.kb.io", "/validate-apps-deployment", false},
				{"vbuiltinreplicaset.kb.io", "/validate-apps-replicaset", false},
				{"vbuiltinstatefulset.kb.io", "/validate-apps-statefulset", false},
				{"vcustomresourcedefinition.kb.io", "/validate-customresourcedefinition", false},
				{"vnamespace.kb.io", "/validate-namespace", false},
				{"vservice.kb.io", "/validate-service", false},
				{"vingress.kb.io", "/validate-ingress", false},
				{"vsidecarset.kb.io", "/validate-apps-kruise-io-v1alpha1-sidecarset", false},
				{"vbroadcastjob.kb.io", "/validate-apps-kruise-io-v1alpha1-broadcastjob", false},
				{"vimagepulljob.kb.io", "/validate-apps-kruise-io-v1alpha1-imagepulljob", false},
				{"vpodprobemarker.kb.io", "/validate-apps-kruise-io-podprobemarker", false},
				{"vimagelistpulljob.kb.io", "/validate-apps-kruise-io-v1alpha1-imagelistpulljob", false},
				{"vnodeimage.kb.io", "/validate-apps-kruise-io-v1alpha1-nodeimage", false},
				{"vpod.kb.io", "/validate-pod", true},
				{"vpodeviction.kb.io", "/validate-pod", true},
				{"vpodunavailablebudget.kb.io", "/validate-policy-kruise-io-podunavailablebudget", false},
				{"vworkloadspread.kb.io", "/validate-apps-kruise-io-v1alpha1-workloadspread", false},
				{"vresourcedistribution.kb.io", "/validate-apps-kruise-io-v1alpha1-resourcedistribution", false},
				{"vpersistentpodstate.kb.io", "/validate-apps-kruise-io-persistentpodstate", false},
				{"vadvancedcronjob.kb.io", "/validate-apps-kruise-io-v1alpha1-advancedcronjob", false},
				{"vephemeraljobs.kb.io", "/validate-apps-kruise-io-v1alpha1-ephemeraljob", false},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("table (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChartFileIsCurrent(t *testing.T) {
	want, err := ChartFile()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "..", "charts", "kruise", "files", "webhooks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("charts/kruise/files/webhooks.yaml is stale; run make manifests (-want +got):\n%s", diff)
	}
}

func TestDesired(t *testing.T) {
	ignore := admissionregistrationv1.Ignore
	cases := map[string]struct {
		target          Target
		wantMutating    map[string]string // name -> failure policy
		wantPodSelector bool
		wantClient      admissionregistrationv1.WebhookClientConfig // of mcloneset
	}{
		"service mode reaches kruise-webhook-service on 443; pod webhooks take their own policy": {
			target:       Target{Namespace: "kruise-system", FailurePolicyPods: ignore},
			wantMutating: map[string]string{"mcloneset.kb.io": "Fail", "mpod.kb.io": "Ignore", "mcontainerrecreaterequest.kb.io": "Fail", "mstatefulset.kb.io": "Fail", "mdaemonset.kb.io": "Fail", "muniteddeployment.kb.io": "Fail", "msidecarset.kb.io": "Fail", "mbroadcastjob.kb.io": "Fail", "mimagepulljob.kb.io": "Fail", "mimagelistpulljob.kb.io": "Fail", "mnodeimage.kb.io": "Fail", "madvancedcronjob.kb.io": "Fail"},
			wantClient: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
				Namespace: "kruise-system", Name: "kruise-webhook-service",
				Path: ptr.To("/mutate-apps-kruise-io-v1alpha1-cloneset"), Port: ptr.To[int32](443),
			}},
		},
		"URL mode points at the host and port": {
			target:       Target{Namespace: "kruise-system", Host: "127.0.0.1", Port: 9876, CABundle: []byte("ca")},
			wantMutating: map[string]string{"mcloneset.kb.io": "Fail", "mpod.kb.io": "Fail", "mcontainerrecreaterequest.kb.io": "Fail", "mstatefulset.kb.io": "Fail", "mdaemonset.kb.io": "Fail", "muniteddeployment.kb.io": "Fail", "msidecarset.kb.io": "Fail", "mbroadcastjob.kb.io": "Fail", "mimagepulljob.kb.io": "Fail", "mimagelistpulljob.kb.io": "Fail", "mnodeimage.kb.io": "Fail", "madvancedcronjob.kb.io": "Fail"},
			wantClient: admissionregistrationv1.WebhookClientConfig{
				URL: ptr.To("https://127.0.0.1:9876/mutate-apps-kruise-io-v1alpha1-cloneset"), CABundle: []byte("ca"),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, v := Desired(tc.target)
			got := map[string]string{}
			for _, w := range m.Webhooks {
				got[w.Name] = string(*w.FailurePolicy)
				if diff := cmp.Diff([]string{"v1", "v1beta1"}, w.AdmissionReviewVersions); diff != "" {
					t.Errorf("%s admissionReviewVersions (-want +got):\n%s", w.Name, diff)
				}
				wantSel := len(w.NamespaceSelector.MatchExpressions) > 0
				if diff := cmp.Diff(w.Name == "mpod.kb.io", wantSel); diff != "" {
					t.Errorf("%s has the pod namespace selector (-want +got):\n%s", w.Name, diff)
				}
			}
			if diff := cmp.Diff(tc.wantMutating, got); diff != "" {
				t.Errorf("failure policies (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantClient, m.Webhooks[0].ClientConfig); diff != "" {
				t.Errorf("mcloneset clientConfig (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{MutatingName, ValidatingName}, []string{m.Name, v.Name}); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFixClientConfig(t *testing.T) {
	svc := func() admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: "kruise-system", Name: ServiceName, Path: ptr.To("/mutate-pod"), Port: ptr.To[int32](443)}}
	}
	cases := map[string]struct {
		target      Target
		in          admissionregistrationv1.WebhookClientConfig
		want        admissionregistrationv1.WebhookClientConfig
		wantChanged bool
	}{
		"service mode only sets the CA": {
			target: Target{CABundle: []byte("ca")}, in: svc(),
			want: func() admissionregistrationv1.WebhookClientConfig {
				c := svc()
				c.CABundle = []byte("ca")
				return c
			}(), wantChanged: true,
		},
		"host mode turns the service into a URL with the same path": {
			target: Target{CABundle: []byte("ca"), Host: "10.1.2.3", Port: 9443}, in: svc(),
			want:        admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://10.1.2.3:9443/mutate-pod"), CABundle: []byte("ca")},
			wantChanged: true,
		},
		"host mode moves an old URL to the new port": {
			target:      Target{CABundle: []byte("ca"), Host: "127.0.0.1", Port: 2},
			in:          admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/x"), CABundle: []byte("ca")},
			want:        admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:2/x"), CABundle: []byte("ca")},
			wantChanged: true,
		},
		"an up-to-date config is left alone": {
			target:      Target{CABundle: []byte("ca"), Host: "127.0.0.1", Port: 2},
			in:          admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:2/x"), CABundle: []byte("ca")},
			want:        admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:2/x"), CABundle: []byte("ca")},
			wantChanged: false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.in
			changed := tc.target.fixClientConfig(&got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("clientConfig (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantChanged, changed); diff != "" {
				t.Errorf("changed (-want +got):\n%s", diff)
			}
		})
	}
}

// hostClientConfig is the host mode's conversion clientConfig, https://127.0.0.1:9876/convert,
// with CA bundle ca.
func hostClientConfig(ca string) *apiextensionsv1.WebhookClientConfig {
	return &apiextensionsv1.WebhookClientConfig{CABundle: []byte(ca), URL: ptr.To("https://127.0.0.1:9876/convert")}
}

// hostConversion is a webhook conversion that holds hostClientConfig(ca).
func hostConversion(ca string) *apiextensionsv1.CustomResourceConversion {
	return &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"}, ClientConfig: hostClientConfig(ca)}}
}

func TestFixConversion(t *testing.T) {
	cases := map[string]struct {
		target      Target
		in          *apiextensionsv1.CustomResourceConversion
		want        *apiextensionsv1.WebhookClientConfig
		wantChanged bool
	}{
		"service mode points at /convert on the Service": {
			target: Target{Namespace: "kruise-system", CABundle: []byte("ca")},
			in:     &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter},
			want: &apiextensionsv1.WebhookClientConfig{CABundle: []byte("ca"), Service: &apiextensionsv1.ServiceReference{
				Namespace: "kruise-system", Name: ServiceName, Path: ptr.To("/convert"), Port: ptr.To[int32](443)}},
			wantChanged: true,
		},
		"host mode points at the URL": {
			target: Target{Host: "127.0.0.1", Port: 9876, CABundle: []byte("ca")},
			in:     hostConversion("old"), want: hostClientConfig("ca"), wantChanged: true,
		},
		"a current conversion is left alone": {
			target: Target{Host: "127.0.0.1", Port: 9876, CABundle: []byte("ca")},
			in:     hostConversion("ca"), want: hostClientConfig("ca"), wantChanged: false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			changed := tc.target.fixConversion(tc.in)
			if diff := cmp.Diff(tc.want, tc.in.Webhook.ClientConfig); diff != "" {
				t.Errorf("clientConfig (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantChanged, changed); diff != "" {
				t.Errorf("changed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestForGates(t *testing.T) {
	on := func(gate featuregate.Feature) featuregate.FeatureGate {
		g := features.NewGate()
		if err := g.SetFromMap(map[string]bool{string(gate): true}); err != nil {
			t.Fatal(err)
		}
		return g
	}
	operations := func(table Table, name string) []string {
		for _, w := range append(append([]Webhook{}, table.Mutating...), table.Validating...) {
			if w.Name == name {
				return w.Rules[0].Operations
			}
		}
		return nil
	}
	cases := map[string]struct {
		gates          featuregate.FeatureGate
		unfiltered     bool // the table as Webhooks returns it
		webhook        string
		wantOperations []string
	}{
		"vpod.kb.io answers no pod UPDATE under the default gates, where no check covers it": {
			webhook: "vpod.kb.io", wantOperations: []string{"DELETE"},
		},
		"vpod.kb.io answers pod UPDATE with PodUnavailableBudgetUpdateGate on": {
			gates: on(features.PodUnavailableBudgetUpdateGate), webhook: "vpod.kb.io", wantOperations: []string{"UPDATE", "DELETE"},
		},
		"vcloneset.kb.io answers no DELETE under the default gates, where deletion protection is off": {
			webhook: "vcloneset.kb.io", wantOperations: []string{"CREATE", "UPDATE"},
		},
		"vstatefulset.kb.io answers DELETE with ResourcesDeletionProtection on": {
			gates: on(features.ResourcesDeletionProtection), webhook: "vstatefulset.kb.io", wantOperations: []string{"CREATE", "UPDATE", "DELETE"},
		},
		"vuniteddeployment.kb.io answers no DELETE under the default gates": {
			webhook: "vuniteddeployment.kb.io", wantOperations: []string{"CREATE", "UPDATE"},
		},
		"an ungated rule keeps every operation": {
			webhook: "mcloneset.kb.io", wantOperations: []string{"CREATE", "UPDATE"},
		},
		"the table itself keeps every operation, for the chart to filter": {
			unfiltered: true, webhook: "vpod.kb.io", wantOperations: []string{"UPDATE", "DELETE"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			table := Webhooks()
			if !tc.unfiltered {
				table = table.ForGates(tc.gates)
			}
			if diff := cmp.Diff(tc.wantOperations, operations(table, tc.webhook)); diff != "" {
				t.Errorf("%s operations (-want +got):\n%s", tc.webhook, diff)
			}
		})
	}
}
