// Package testkit is what the controllers' unit tests share: the runner of a table of cases keyed
// by a sentence of behaviour (Cases) and the one comparison every table reports with (Diff).
// Only _test.go files import it. It must not import any controller package (`controllers/...`
// other than `controllers/internal/...`).
package testkit
