// Package promreg registers Prometheus collectors so that a second registration of the same
// metric (two managers in one process, as the tests run them) shares the first collector instead
// of failing. It imports only the Prometheus client; it must not import `...`.
package promreg
