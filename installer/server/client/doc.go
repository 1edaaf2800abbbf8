// Package client is a typed Go client of the kruise-addon serve API, generated from
// installer/server/openapi.yaml by oapi-codegen, as a console team would generate theirs.
// TestGeneratedClientMatchesTheDocument regenerates it and fails on any difference, so the
// document stays one a generator accepts and this package never drifts from it. Like a console
// team's client, it must not import `...` (no package of this module).
// TestOgenBuildsAClientFromTheDocument has a second generator, ogen (ogen.yml), build its own
// client from the same document in a module of its own, so the document is not one generator's
// dialect.
package client

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.5.1 -config oapi-codegen.yaml ../openapi.yaml
