// Package testkit is what the module's unit tests share: the runner of a table of cases keyed by
// a sentence of behaviour (Cases), the one comparison every table reports with (Diff), a fake
// client's count of status writes (CountStatusPatches), a temporary file (TempFile) and the
// parts a message lacks (Missing). Only _test.go files import it. It is a leaf every test can
// stand on: it must not import `...`.
package testkit
