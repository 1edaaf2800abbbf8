// Package servertest checks the API's responses against its OpenAPI document, for the server's
// unit tests, its integration suite and its bench. It validates each response body with the
// JSON Schema library already in the module (the document is OpenAPI 3.1, whose schemas are
// JSON Schema 2020-12), so no OpenAPI library is needed.
//
// It must only be imported by tests.
package servertest
