package chart

import (
	"strings"
	"testing"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestManagerGOGCFromValues(t *testing.T) {
	type tcase struct {
		vals    map[string]any
		want    string
		wantErr string
	}
	cases := map[string]tcase{
		"the default render gives the manager GOGC 50":             {want: "50"},
		"manager.gogc 200 gives the manager GOGC 200":              {vals: values("manager.gogc", 200), want: "200"},
		"manager.gogc below 10 fails the render, naming the value": {vals: values("manager.gogc", 5), wantErr: "gogc"},
		"manager.gogc as a string fails the render":                {vals: values("manager.gogc", "off"), wantErr: "gogc"},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		if tc.wantErr != "" {
			_, err := render(t, tc.vals)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("render error %v, want one naming %q", err, tc.wantErr)
			}
			return
		}
		got := ""
		for _, e := range managerPod(t, tc.vals).Containers[0].Env {
			if e.Name == "GOGC" {
				got = e.Value
			}
		}
		if got != tc.want {
			t.Errorf("GOGC %q, want %q", got, tc.want)
		}
	})
}
