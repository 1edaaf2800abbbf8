package deletionprotection

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/features"
)

// TestRefusalsAreCountedInThe18Metrics: as in 1.8, each refused deletion adds one to
// namespace_deletion_protection{name,username}, crd_deletion_protection{name,username} or
// workload_deletion_protection{kind_namespace_name,username}, so dashboards and alerts written
// for 1.8 keep working; an allowed deletion, or a Service's refusal, counts nowhere.
func TestRefusalsAreCountedInThe18Metrics(t *testing.T) {
	type refusal struct{ group, kind, namespace, name string }
	cases := map[string]struct {
		refused []refusal
		allowed bool
		want    map[string]float64 // "metric label,label" -> value
	}{
		"a refused Deployment counts as a workload": {
			refused: []refusal{{"apps", "Deployment", "shop", "web"}},
			want:    map[string]float64{"workload_deletion_protection Deployment_shop_web,alice": 1},
		},
		"a refused CloneSet counts as a workload": {
			refused: []refusal{{"apps.kruise.io", "CloneSet", "shop", "web"}, {"apps.kruise.io", "CloneSet", "shop", "web"}},
			want:    map[string]float64{"workload_deletion_protection CloneSet_shop_web,alice": 2},
		},
		"a refused Namespace counts by its name": {
			refused: []refusal{{"", "Namespace", "", "shop"}},
			want:    map[string]float64{"namespace_deletion_protection shop,alice": 1},
		},
		"a refused CRD counts by its name": {
			refused: []refusal{{"apiextensions.k8s.io", "CustomResourceDefinition", "", "clonesets.apps.kruise.io"}},
			want:    map[string]float64{"crd_deletion_protection clonesets.apps.kruise.io,alice": 1},
		},
		"a refused Service counts nowhere":   {refused: []refusal{{"", "Service", "shop", "web"}}, want: map[string]float64{}},
		"an allowed deletion counts nowhere": {refused: []refusal{{"apps", "Deployment", "shop", "web"}}, allowed: true, want: map[string]float64{}},
	}
	gates := features.NewGate()
	if err := gates.Set("ResourcesDeletionProtection=true"); err != nil {
		t.Fatal(err)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m, err := NewMetrics(reg)
			if err != nil {
				t.Fatal(err)
			}
			g := NewGuard(gates, nil, false).WithMetrics(m)
			for _, r := range tc.refused {
				req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
					Operation: admissionv1.Delete, Namespace: r.namespace, Name: r.name,
					Kind:     metav1.GroupVersionKind{Group: r.group, Kind: r.kind},
					UserInfo: authenticationv1.UserInfo{Username: "alice"},
				}}
				var verdict error
				if !tc.allowed {
					verdict = errors.New("forbidden by ResourcesProtectionDeletion")
				}
				g.Answer(context.Background(), req, verdict)
			}
			got := map[string]float64{}
			families, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range families {
				for _, metric := range f.GetMetric() {
					key := f.GetName() + " "
					for i, l := range metric.GetLabel() {
						if i > 0 {
							key += ","
						}
						key += l.GetValue()
					}
					got[key] = metric.GetCounter().GetValue()
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("counters (-want +got):\n%s", diff)
			}
		})
	}
}
