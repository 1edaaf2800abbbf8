package cri

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestSpecEnv(t *testing.T) {
	type tcase struct {
		info   map[string]string
		want   map[string]string
		wantOK bool
	}
	tests := map[string]tcase{
		"process.env of the runtime spec in the verbose info is the container's env": {
			info:   map[string]string{"info": `{"pid":7,"runtimeSpec":{"process":{"env":["PATH=/bin","TRACK=canary","EMPTY=","EQ=a=b"]}}}`},
			want:   map[string]string{"PATH": "/bin", "TRACK": "canary", "EMPTY": "", "EQ": "a=b"},
			wantOK: true,
		},
		"a runtime that shows no info entry is asked another way": {info: map[string]string{}},
		"info without a runtime spec is asked another way":        {info: map[string]string{"info": `{"pid":7}`}},
		"info that is not JSON is asked another way":              {info: map[string]string{"info": `pid 7`}},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		got, ok := specEnv(tt.info)
		if ok != tt.wantOK {
			t.Fatalf("specEnv ok = %v, want %v", ok, tt.wantOK)
		}
		testkit.Diff(t, "specEnv", tt.want, got)
	})
}

func TestParseEnv(t *testing.T) {
	got := parseEnv([]string{"A=1", "junk", "=x", "A=2", "B="})
	if diff := cmp.Diff(map[string]string{"A": "1", "B": ""}, got); diff != "" {
		t.Errorf("parseEnv (-want +got):\n%s", diff)
	}
}
