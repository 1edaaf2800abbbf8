package promreg

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c with reg and returns it, or, when reg already holds a collector of the
// same description and type, that one.
func Register[T prometheus.Collector](reg prometheus.Registerer, c T) (T, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if !errors.As(err, &are) {
		return c, fmt.Errorf("register metric: %w", err)
	}
	existing, ok := are.ExistingCollector.(T)
	if !ok {
		return c, fmt.Errorf("register metric: %w", err)
	}
	return existing, nil
}
