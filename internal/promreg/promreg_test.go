package promreg

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestRegister(t *testing.T) {
	reg := prometheus.NewRegistry()
	newCounter := func() *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "refusals", Help: "h"}, []string{"name"})
	}
	first, err := Register(reg, newCounter())
	if err != nil {
		t.Fatal(err)
	}
	second, err := Register(reg, newCounter())
	if err != nil {
		t.Fatalf("a second registration of the same metric fails: %v", err)
	}
	if first != second {
		t.Error("a second registration of the same metric does not share the first collector")
	}
	if _, err := Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "refusals", Help: "other"}, []string{"name"})); err == nil {
		t.Error("a metric of the same name and another description is registered, want an error")
	}
}
