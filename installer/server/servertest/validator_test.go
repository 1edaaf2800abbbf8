package servertest

import (
	"strings"
	"testing"
)

const doc = `
openapi: 3.1.0
paths:
  /v1/things/{id}:
    get:
      responses:
        "200":
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Thing"}
            text/event-stream:
              schema: {type: string}
              x-event-data: {$ref: "#/components/schemas/Thing"}
        default: {$ref: "#/components/responses/Error"}
components:
  responses:
    Error:
      content:
        application/json:
          schema: {type: object, required: [error], properties: {error: {type: string}}}
  schemas:
    Thing:
      type: object
      required: [name]
      additionalProperties: false
      properties:
        name: {type: string}
`

func TestCheck(t *testing.T) {
	cases := []struct {
		name        string
		method      string
		path        string
		status      int
		contentType string
		body        string
		wantErr     string
	}{
		{"a matching body passes", "GET", "/v1/things/a", 200, "application/json", `{"name":"a"}`, ""},
		{"a missing required field fails", "GET", "/v1/things/a", 200, "application/json", `{}`, "missing property 'name'"},
		{"an undocumented field fails", "GET", "/v1/things/a", 200, "application/json", `{"name":"a","extra":1}`, "additional properties 'extra'"},
		{"an error status takes the default response", "GET", "/v1/things/a", 404, "application/json; charset=utf-8", `{"error":"gone"}`, ""},
		{"an undocumented method fails", "POST", "/v1/things/a", 200, "application/json", `{"name":"a"}`, "POST /v1/things/{id} is not in the document"},
		{"an undocumented content type fails", "GET", "/v1/things/a", 200, "text/plain", `x`, `content type "text/plain"`},
		{"each complete event is checked", "GET", "/v1/things/a", 200, "text/event-stream", "id: 1\ndata: {\"name\":\"a\"}\n\nid: 2\ndata: {\"nom\":\"b\"}\n\n", "event does not match"},
		{"an event cut short by the client is not checked", "GET", "/v1/things/a", 200, "text/event-stream", "id: 1\ndata: {\"name\":\"a\"}\n\nid: 2\ndata: {\"na", ""},
		{"an undocumented path must still answer the Error", "GET", "/v2/x", 404, "application/json", `{"nope":1}`, "missing property 'error'"},
		{"an undocumented path cannot succeed", "GET", "/v2/x", 200, "application/json", `{}`, "not in the document"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := New([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			err = v.Check(tc.method, tc.path, tc.status, tc.contentType, []byte(tc.body))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("want no error, got %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("want an error with %q, got %v", tc.wantErr, err)
			}
		})
	}
}
