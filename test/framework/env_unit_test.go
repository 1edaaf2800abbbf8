package framework

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAPIServerArgs(t *testing.T) {
	cases := map[string]struct {
		defaults, overrides map[string]string
		want                []string
	}{
		"defaults render sorted as --name=value": {
			defaults: map[string]string{"b": "2", "a": "1"},
			want:     []string{"--a=1", "--b=2"},
		},
		"an override replaces the default of the same name, with or without dashes": {
			defaults:  map[string]string{"a": "1", "b": "2"},
			overrides: map[string]string{"--a": "9", "c": "3"},
			want:      []string{"--a=9", "--b=2", "--c=3"},
		},
		"an empty override drops the default": {
			defaults:  map[string]string{"a": "1", "b": "2"},
			overrides: map[string]string{"a": ""},
			want:      []string{"--b=2"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, apiserverArgs(tc.defaults, tc.overrides)); d != "" {
				t.Errorf("args (-want +got):\n%s", d)
			}
		})
	}
}

func TestMissingBinariesNameTheFix(t *testing.T) {
	partial := t.TempDir()
	if err := os.WriteFile(filepath.Join(partial, "etcd"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		env, dir  string
		wantNames []string
	}{
		"KUBEBUILDER_ASSETS unset":                {},
		"KUBEBUILDER_ASSETS without the binaries": {env: t.TempDir(), wantNames: []string{"etcd", "kube-apiserver", "kubectl"}},
		"an assets option with only etcd":         {dir: partial, wantNames: []string{"kube-apiserver", "kubectl"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv(assetsEnvVar, tc.env)
			_, err := findAssets(tc.dir)
			if !errors.Is(err, ErrAssetsMissing) {
				t.Fatalf("err = %v, want ErrAssetsMissing", err)
			}
			for _, want := range append([]string{"KUBEBUILDER_ASSETS", "make testbin"}, tc.wantNames...) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not name %q: %v", want, err)
				}
			}
		})
	}
}
