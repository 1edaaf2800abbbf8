package kit

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestMetadataPatch(t *testing.T) {
	type tcase struct {
		field, key string
		value      *string
		want       string
	}
	testkit.Cases(t, map[string]tcase{
		"a value sets the one key":     {field: "annotations", key: "example.com/at", value: ptr.To(`2026-01-01T00:00:00Z`), want: `{"metadata":{"annotations":{"example.com/at":"2026-01-01T00:00:00Z"}}}`},
		"no value removes the one key": {field: "labels", key: "example.com/active", value: nil, want: `{"metadata":{"labels":{"example.com/active":null}}}`},
		"a value is JSON-escaped":      {field: "annotations", key: "k", value: ptr.To(`[{"name":"a"}]`), want: `{"metadata":{"annotations":{"k":"[{\"name\":\"a\"}]"}}}`},
	}, func(t *testing.T, c tcase) {
		testkit.Diff(t, "patch", c.want, string(metadataPatch(c.field, c.key, c.value)))
	})
}
