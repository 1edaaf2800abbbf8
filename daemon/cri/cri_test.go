package cri

import (
	"testing"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestCandidates(t *testing.T) {
	type tcase struct {
		dir  string
		want []Candidate
	}
	tests := map[string]tcase{
		"the probe order is containerd, cri-o, then cri-dockerd, each flat then in its own dir": {
			dir: "/hostvarrun",
			want: []Candidate{
				{"containerd", "/hostvarrun/containerd.sock"},
				{"containerd", "/hostvarrun/containerd/containerd.sock"},
				{"cri-o", "/hostvarrun/crio.sock"},
				{"cri-o", "/hostvarrun/crio/crio.sock"},
				{"cri-dockerd", "/hostvarrun/cri-dockerd.sock"},
				{"cri-dockerd", "/hostvarrun/cri-dockerd/cri-dockerd.sock"},
			},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		testkit.Diff(t, "Candidates", tt.want, Candidates(tt.dir))
	})
}

func TestNameForPath(t *testing.T) {
	tests := []struct {
		name, path, want string
	}{
		{name: "a known socket name keeps its runtime's name", path: "/x/crio.sock", want: "cri-o"},
		{name: "an unknown socket name is named by the runtime later", path: "/x/other.sock", want: "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testkit.Diff(t, "nameForPath", tt.want, nameForPath("/hostvarrun", tt.path))
		})
	}
}
