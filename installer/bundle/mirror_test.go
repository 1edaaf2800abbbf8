package bundle

import (
	"strings"
	"testing"
)

func TestMirroredChartValues(t *testing.T) {
	want := map[string]any{"imageRegistry": "mirror.example:5000/k",
		"manager": map[string]any{"image": map[string]any{"registry": "mirror.example:5000/k", "repository": "kruise-addon/kruise-manager", "tag": "sha256:ab"}}}
	cases := map[string]struct {
		in        string
		wantLines []string
		wantErr   string
	}{
		"the registry and the digest replace their lines, comments stay": {
			in:        "# top\nimageRegistry: \"\"\nmanager:\n  replicas: 1\n  image:\n    registry: registry.example.com\n    repository: kruise-addon/kruise-manager\n    # Empty means the appVersion.\n    tag: \"\"\n    pullPolicy: IfNotPresent\n  logLevel: 4\n",
			wantLines: []string{"# top", `imageRegistry: "mirror.example:5000/k"`, `    registry: "mirror.example:5000/k"`, `    tag: "sha256:ab"`, "    # Empty means the appVersion.", "  logLevel: 4"},
		},
		"an image block without a tag line is refused rather than left pointing elsewhere": {
			in:      "imageRegistry: \"\"\nmanager:\n  image:\n    registry: registry.example.com\n    repository: kruise-addon/kruise-manager\n",
			wantErr: "manager.image.tag reads <nil> after the rewrite",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := setValues(tc.in, want)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range tc.wantLines {
				if !strings.Contains("\n"+got+"\n", "\n"+l+"\n") {
					t.Errorf("no line %q in:\n%s", l, got)
				}
			}
		})
	}
}
