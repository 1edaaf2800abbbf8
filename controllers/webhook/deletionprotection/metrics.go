package deletionprotection

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/internal/promreg"
)

// Metrics counts refused deletions under 1.8's metric names and labels, so that dashboards and
// alerts written for 1.8 keep working.
type Metrics struct {
	namespaces, crds, workloads *prometheus.CounterVec
}

// NewMetrics registers the three counters with reg. A second call with the same registry (two
// managers in one process) shares the first one's counters.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	var m Metrics
	for _, c := range []struct {
		into       **prometheus.CounterVec
		name, help string
		labels     []string
	}{
		{&m.namespaces, "namespace_deletion_protection", "Namespace deletions refused by deletion protection.", []string{"name", "username"}},
		{&m.crds, "crd_deletion_protection", "CustomResourceDefinition deletions refused by deletion protection.", []string{"name", "username"}},
		{&m.workloads, "workload_deletion_protection", "Workload deletions refused by deletion protection.", []string{"kind_namespace_name", "username"}},
	} {
		v, err := promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: c.name, Help: c.help}, c.labels))
		if err != nil {
			return nil, err
		}
		*c.into = v
	}
	return &m, nil
}

// refused counts one refused deletion. Services and Ingresses, as in 1.8, count nowhere.
func (m *Metrics) refused(req admission.Request) {
	if m == nil {
		return
	}
	user := req.UserInfo.Username
	switch req.Kind.Kind {
	case "Namespace":
		m.namespaces.WithLabelValues(req.Name, user).Inc()
	case "CustomResourceDefinition":
		m.crds.WithLabelValues(req.Name, user).Inc()
	case "Service", "Ingress":
	default:
		m.workloads.WithLabelValues(req.Kind.Kind+"_"+req.Namespace+"_"+req.Name, user).Inc()
	}
}
