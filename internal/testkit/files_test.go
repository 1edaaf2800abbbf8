package testkit

import (
	"os"
	"testing"
)

func TestTempFileHoldsTheContentUnderItsName(t *testing.T) {
	p := TempFile(t, "v.yaml", "a: 1\n")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	Diff(t, "content", "a: 1\n", string(b))
	Diff(t, "name", "v.yaml", p[len(p)-len("v.yaml"):])
}

type missingCase struct {
	parts []string
	want  []string
}

func TestMissing(t *testing.T) {
	Cases(t, map[string]missingCase{
		"a string that holds every part misses none":  {parts: []string{"install", "failed"}},
		"the parts it lacks are named in their order": {parts: []string{"zeta", "install", "alpha"}, want: []string{"zeta", "alpha"}},
		"no parts asked for, none missing":            {},
	}, func(t *testing.T, c missingCase) {
		Diff(t, "missing", c.want, Missing("the install failed", c.parts...))
	})
}
