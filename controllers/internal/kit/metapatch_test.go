package kit

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestMetadataPatch(t *testing.T) {
	type tcase struct {
		labels, annotations map[string]*string
		want                string
	}
	testkit.Cases(t, map[string]tcase{
		"a value sets the one key":     {annotations: map[string]*string{"example.com/at": ptr.To(`2026-01-01T00:00:00Z`)}, want: `{"metadata":{"annotations":{"example.com/at":"2026-01-01T00:00:00Z"}}}`},
		"no value removes the one key": {labels: map[string]*string{"example.com/active": nil}, want: `{"metadata":{"labels":{"example.com/active":null}}}`},
		"a value is JSON-escaped":      {annotations: map[string]*string{"k": ptr.To(`[{"name":"a"}]`)}, want: `{"metadata":{"annotations":{"k":"[{\"name\":\"a\"}]"}}}`},
		"labels and annotations go in one patch": {
			labels: map[string]*string{"healthy": ptr.To("true")}, annotations: map[string]*string{"example.com/unhealthy": nil},
			want: `{"metadata":{"annotations":{"example.com/unhealthy":null},"labels":{"healthy":"true"}}}`,
		},
	}, func(t *testing.T, c tcase) {
		testkit.Diff(t, "patch", c.want, string(metadataPatch(c.labels, c.annotations)))
	})
}
