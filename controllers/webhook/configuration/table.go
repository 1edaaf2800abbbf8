package configuration

import (
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/yaml"

	"github.com/kruise-addon/kruise-addon/features"
)

// Object names and the Service the webhooks are reached through.
const (
	MutatingName   = "kruise-mutating-webhook-configuration"
	ValidatingName = "kruise-validating-webhook-configuration"
	ServiceName    = "kruise-webhook-service"
	ServicePort    = 443
)

// Rule is one admission rule.
type Rule struct {
	APIGroups   []string `json:"apiGroups"`
	APIVersions []string `json:"apiVersions"`
	Operations  []string `json:"operations"`
	Resources   []string `json:"resources"`
	Scope       string   `json:"scope,omitempty"`
	// OperationGates names, for an operation of Operations, the feature gate without which no
	// check answers it: the operation is left out of the rule while the gate is off (ForGates),
	// so that the apiserver does not call a webhook that can only allow.
	OperationGates map[string]string `json:"operationGates,omitempty"`
}

// Webhook is one entry of a webhook configuration.
type Webhook struct {
	Name string `json:"name"`
	Path string `json:"path"`
	// PodWebhook marks the pod webhooks: their failure policy is configured apart and their
	// namespace selector skips the install namespace and kube-system.
	PodWebhook bool `json:"podWebhook"`
	// Protection marks the deletion protection webhooks of Kubernetes' own kinds: they fail
	// open (failurePolicy Ignore), see only objects carrying the delete-protection label, and
	// skip kube-system, so an outage of the add-on never blocks a deletion nobody protected.
	Protection  bool   `json:"protection,omitempty"`
	SideEffects string `json:"sideEffects"`
	Rules       []Rule `json:"rules"`
}

// Table is every webhook, by configuration.
type Table struct {
	Mutating   []Webhook `json:"mutating"`
	Validating []Webhook `json:"validating"`
	// GateDefaults holds the default of every gate an OperationGates names, so that the chart
	// can tell a gate's value when featureGates does not set it.
	GateDefaults map[string]bool `json:"gateDefaults,omitempty"`
}

// Webhooks returns the table: only webhooks the manager has a handler for, with 1.8's names,
// paths and rules.
func Webhooks() Table {
	createUpdate := []string{"CREATE", "UPDATE"}
	kruise := func(versions []string, ops []string, resource string) []Rule {
		return []Rule{{APIGroups: []string{"apps.kruise.io"}, APIVersions: versions, Operations: ops, Resources: []string{resource}}}
	}
	// kruiseValidating checks CREATE and UPDATE of one apps.kruise.io/v1alpha1 resource, and
	// kruiseMutating defaults them.
	kruiseValidating := func(name, path, resource string) Webhook {
		return Webhook{Name: name, Path: path, SideEffects: "None", Rules: kruise([]string{"v1alpha1"}, createUpdate, resource)}
	}
	kruiseMutating := kruiseValidating
	// deleteGated asks for DELETE only while ResourcesDeletionProtection is on: the workload
	// webhooks check a deletion for nothing else, so with the gate off a deletion would wait on
	// a call that can only allow it, and would fail while the manager is down.
	deleteGated := func(rules []Rule) []Rule {
		for i := range rules {
			rules[i].OperationGates = map[string]string{"DELETE": string(features.ResourcesDeletionProtection)}
		}
		return rules
	}
	t := Table{
		Mutating: []Webhook{
			{
				Name: "mcloneset.kb.io", Path: "/mutate-apps-kruise-io-v1alpha1-cloneset", SideEffects: "None",
				Rules: kruise([]string{"v1alpha1"}, createUpdate, "clonesets"),
			},
			{
				Name: "mstatefulset.kb.io", Path: "/mutate-apps-kruise-io-statefulset", SideEffects: "None",
				Rules: kruise([]string{"v1alpha1", "v1beta1"}, createUpdate, "statefulsets"),
			},
			{
				Name: "mdaemonset.kb.io", Path: "/mutate-apps-kruise-io-v1alpha1-daemonset", SideEffects: "None",
				Rules: kruise([]string{"v1alpha1"}, createUpdate, "daemonsets"),
			},
			{
				Name: "muniteddeployment.kb.io", Path: "/mutate-apps-kruise-io-v1alpha1-uniteddeployment", SideEffects: "None",
				Rules: kruise([]string{"v1alpha1"}, createUpdate, "uniteddeployments"),
			},
			{
				Name: "msidecarset.kb.io", Path: "/mutate-apps-kruise-io-v1alpha1-sidecarset", SideEffects: "None",
				Rules: kruise([]string{"v1alpha1"}, createUpdate, "sidecarsets"),
			},
			{
				Name: "mpod.kb.io", Path: "/mutate-pod", PodWebhook: true, SideEffects: "None",
				Rules: []Rule{{APIGroups: []string{""}, APIVersions: []string{"v1"}, Operations: []string{"CREATE"}, Resources: []string{"pods"}}},
			},
			{
				Name: "mbroadcastjob.kb.io", Path: "/mutate-apps-kruise-io-v1alpha1-broadcastjob", SideEffects: "None",
				Rules: kruise([]string{"v1alpha1"}, createUpdate, "broadcastjobs"),
			},
			{
				Name: "mcontainerrecreaterequest.kb.io", Path: "/mutate-apps-kruise-io-v1alpha1-containerrecreaterequest", SideEffects: "None",
				Rules: kruise([]string{"v1alpha1"}, createUpdate, "containerrecreaterequests"),
			},
			kruiseMutating("mimagepulljob.kb.io", "/mutate-apps-kruise-io-v1alpha1-imagepulljob", "imagepulljobs"),
			kruiseMutating("mimagelistpulljob.kb.io", "/mutate-apps-kruise-io-v1alpha1-imagelistpulljob", "imagelistpulljobs"),
			kruiseMutating("mnodeimage.kb.io", "/mutate-apps-kruise-io-v1alpha1-nodeimage", "nodeimages"),
			kruiseMutating("madvancedcronjob.kb.io", "/mutate-apps-kruise-io-v1alpha1-advancedcronjob", "advancedcronjobs"),
		},
		Validating: []Webhook{
			{
				Name: "vcloneset.kb.io", Path: "/validate-apps-kruise-io-v1alpha1-cloneset", SideEffects: "None",
				Rules: deleteGated(kruise([]string{"v1alpha1"}, []string{"CREATE", "UPDATE", "DELETE"}, "clonesets")),
			},
			{
				Name: "vstatefulset.kb.io", Path: "/validate-apps-kruise-io-statefulset", SideEffects: "None",
				Rules: deleteGated(kruise([]string{"v1alpha1", "v1beta1"}, []string{"CREATE", "UPDATE", "DELETE"}, "statefulsets")),
			},
			kruiseValidating("vdaemonset.kb.io", "/validate-apps-kruise-io-v1alpha1-daemonset", "daemonsets"),
			{
				Name: "vuniteddeployment.kb.io", Path: "/validate-apps-kruise-io-v1alpha1-uniteddeployment", SideEffects: "None",
				Rules: deleteGated(kruise([]string{"v1alpha1"}, []string{"CREATE", "UPDATE", "DELETE"}, "uniteddeployments")),
			},
			protection("vbuiltindeployment.kb.io", "/validate-apps-deployment", "apps", []string{"v1"}, "deployments"),
			protection("vbuiltinreplicaset.kb.io", "/validate-apps-replicaset", "apps", []string{"v1"}, "replicasets"),
			protection("vbuiltinstatefulset.kb.io", "/validate-apps-statefulset", "apps", []string{"v1"}, "statefulsets"),
			protection("vcustomresourcedefinition.kb.io", "/validate-customresourcedefinition", "apiextensions.k8s.io", []string{"v1"}, "customresourcedefinitions"),
			protection("vnamespace.kb.io", "/validate-namespace", "", []string{"v1"}, "namespaces"),
			protection("vservice.kb.io", "/validate-service", "", []string{"v1"}, "services"),
			protection("vingress.kb.io", "/validate-ingress", "networking.k8s.io", []string{"v1"}, "ingresses"),
			kruiseValidating("vsidecarset.kb.io", "/validate-apps-kruise-io-v1alpha1-sidecarset", "sidecarsets"),
			kruiseValidating("vbroadcastjob.kb.io", "/validate-apps-kruise-io-v1alpha1-broadcastjob", "broadcastjobs"),
			kruiseValidating("vimagepulljob.kb.io", "/validate-apps-kruise-io-v1alpha1-imagepulljob", "imagepulljobs"),
			kruiseValidating("vpodprobemarker.kb.io", "/validate-apps-kruise-io-podprobemarker", "podprobemarkers"),
			kruiseValidating("vimagelistpulljob.kb.io", "/validate-apps-kruise-io-v1alpha1-imagelistpulljob", "imagelistpulljobs"),
			kruiseValidating("vnodeimage.kb.io", "/validate-apps-kruise-io-v1alpha1-nodeimage", "nodeimages"),
			{
				// UPDATE is for PodUnavailableBudget's in-place update check alone, so it is in
				// the rule only while PodUnavailableBudgetUpdateGate is on: otherwise every
				// in-place update and lifecycle write of a pod would wait on a call that can
				// only allow it. A pod without the related-pub annotation is answered without
				// a read.
				Name: "vpod.kb.io", Path: "/validate-pod", PodWebhook: true, SideEffects: "None",
				Rules: []Rule{{APIGroups: []string{""}, APIVersions: []string{"v1"}, Operations: []string{"UPDATE", "DELETE"}, Resources: []string{"pods"},
					OperationGates: map[string]string{"UPDATE": string(features.PodUnavailableBudgetUpdateGate)}}},
			},
			{
				Name: "vpodeviction.kb.io", Path: "/validate-pod", PodWebhook: true, SideEffects: "None",
				Rules: []Rule{{APIGroups: []string{""}, APIVersions: []string{"v1"}, Operations: []string{"CREATE"}, Resources: []string{"pods/eviction"}}},
			},
			{
				Name: "vpodunavailablebudget.kb.io", Path: "/validate-policy-kruise-io-podunavailablebudget", SideEffects: "None",
				Rules: []Rule{{APIGroups: []string{"policy.kruise.io"}, APIVersions: []string{"v1alpha1"}, Operations: createUpdate, Resources: []string{"podunavailablebudgets"}}},
			},
			kruiseValidating("vworkloadspread.kb.io", "/validate-apps-kruise-io-v1alpha1-workloadspread", "workloadspreads"),
			kruiseValidating("vresourcedistribution.kb.io", "/validate-apps-kruise-io-v1alpha1-resourcedistribution", "resourcedistributions"),
			kruiseValidating("vpersistentpodstate.kb.io", "/validate-apps-kruise-io-persistentpodstate", "persistentpodstates"),
			kruiseValidating("vadvancedcronjob.kb.io", "/validate-apps-kruise-io-v1alpha1-advancedcronjob", "advancedcronjobs"),
			kruiseValidating("vephemeraljobs.kb.io", "/validate-apps-kruise-io-v1alpha1-ephemeraljob", "ephemeraljobs"),
		},
	}
	t.GateDefaults = t.gateDefaults()
	return t
}

// gateDefaults is the default of every gate the table's OperationGates name.
func (t Table) gateDefaults() map[string]bool {
	specs := features.Specs()
	out := map[string]bool{}
	for _, w := range append(append([]Webhook{}, t.Mutating...), t.Validating...) {
		for _, r := range w.Rules {
			for _, gate := range r.OperationGates {
				out[gate] = specs[featuregate.Feature(gate)].Default
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ForGates is the table as the apiserver should see it under gates: each rule without the
// operations whose OperationGates gate is off, and without OperationGates. A nil gates means
// every gate at its default.
func (t Table) ForGates(gates featuregate.FeatureGate) Table {
	if gates == nil {
		gates = features.NewGate()
	}
	rules := func(hooks []Webhook) []Webhook {
		out := make([]Webhook, 0, len(hooks))
		for _, w := range hooks {
			w.Rules = slices.Clone(w.Rules)
			for i, r := range w.Rules {
				ops := make([]string, 0, len(r.Operations))
				for _, op := range r.Operations {
					if gate, ok := r.OperationGates[op]; !ok || gates.Enabled(featuregate.Feature(gate)) {
						ops = append(ops, op)
					}
				}
				r.Operations, r.OperationGates = ops, nil
				w.Rules[i] = r
			}
			out = append(out, w)
		}
		return out
	}
	return Table{Mutating: rules(t.Mutating), Validating: rules(t.Validating)}
}

// protection is a deletion protection webhook: DELETE of one resource.
func protection(name, path, group string, versions []string, resource string) Webhook {
	return Webhook{Name: name, Path: path, Protection: true, SideEffects: "None",
		Rules: []Rule{{APIGroups: []string{group}, APIVersions: versions, Operations: []string{"DELETE"}, Resources: []string{resource}}}}
}

// ProtectionLabel is the label the deletion protection webhooks select objects by.
const ProtectionLabel = "policy.kruise.io/delete-protection"

// Paths lists every path of the table, mutating first.
func (t Table) Paths() []string {
	var out []string
	for _, w := range append(append([]Webhook{}, t.Mutating...), t.Validating...) {
		out = append(out, w.Path)
	}
	return out
}

// ChartFile renders the table as charts/kruise/files/webhooks.yaml.
func ChartFile() ([]byte, error) {
	body, err := yaml.Marshal(Webhooks())
	if err != nil {
		return nil, fmt.Errorf("render webhook table: %w", err)
	}
	header := "# Generated by `make manifests` from controllers/webhook/configuration/table.go; do not edit.\n"
	return append([]byte(header), body...), nil
}

// AdmissionReviewVersions are the versions every webhook accepts.
func AdmissionReviewVersions() []string { return []string{"v1", "v1beta1"} }

func (r Rule) toAPI() admissionregistrationv1.RuleWithOperations {
	ops := make([]admissionregistrationv1.OperationType, 0, len(r.Operations))
	for _, o := range r.Operations {
		ops = append(ops, admissionregistrationv1.OperationType(o))
	}
	out := admissionregistrationv1.RuleWithOperations{
		Operations: ops,
		Rule: admissionregistrationv1.Rule{
			APIGroups: r.APIGroups, APIVersions: r.APIVersions, Resources: r.Resources,
		},
	}
	if r.Scope != "" {
		s := admissionregistrationv1.ScopeType(r.Scope)
		out.Scope = &s
	}
	return out
}
