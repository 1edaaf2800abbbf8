package installer

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/kruise-addon/kruise-addon/installer/chartsource"
	"github.com/kruise-addon/kruise-addon/installer/spec"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// schemaRuns is how often each case is validated: the validator's map order changes per run.
const schemaRuns = 50

func TestSchemaErrorsNameTheFieldAndAreStable(t *testing.T) {
	ch, err := chartsource.Load(filepath.Join("..", "charts", "kruise"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		vals      map[string]any
		wantLines []string
	}{
		{"an unknown workers kind is reported at manager.workers",
			map[string]any{"manager": map[string]any{"workers": map[string]any{"Bad_Kind": 1}}},
			[]string{"- at '/manager/workers': additional properties 'Bad_Kind' not allowed"}},
		{"a bad label key is reported at its map",
			map[string]any{"daemon": map[string]any{"podLabels": map[string]any{"bad key": "x"}}},
			[]string{"- at '/daemon/podLabels': additional properties 'bad key' not allowed"}},
		{"several errors come in one order, each at its own field",
			map[string]any{
				"manager": map[string]any{"replicas": 0, "logLevel": 99, "workers": map[string]any{"Bad_Kind": 1}, "podLabels": map[string]any{"bad key": "x"}},
				"daemon":  map[string]any{"port": 0},
			},
			[]string{
				"- at '/manager/logLevel': maximum: got 99, want 10",
				"- at '/manager/replicas': minimum: got 0, want 1",
				"- at '/manager/workers': additional properties 'Bad_Kind' not allowed",
				"- at '/manager/podLabels': additional properties 'bad key' not allowed",
				"- at '/daemon/port': minimum: got 0, want 1",
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[string]int{}
			for range schemaRuns {
				err := validateSchema(ch, tc.vals)
				var invalid *InvalidError
				if !errors.As(err, &invalid) {
					t.Fatalf("validateSchema: %v, want an InvalidError", err)
				}
				seen[err.Error()]++
			}
			if len(seen) != 1 {
				var msgs []string
				for m, n := range seen {
					msgs = append(msgs, fmt.Sprintf("=== seen %d times:\n%s", n, m))
				}
				t.Fatalf("%d runs gave %d different messages:\n%s", schemaRuns, len(seen), strings.Join(msgs, "\n"))
			}
			for msg := range seen {
				for _, want := range tc.wantLines {
					if !strings.Contains(msg, want) {
						t.Errorf("message lacks %q:\n%s", want, msg)
					}
				}
			}
		})
	}
}

func TestSortSchemaErrors(t *testing.T) {
	in := "kruise:\n- at '/manager': validation failed\n  - at '/manager/workers': b\n  - at '/manager/replicas': a\n    - at '': cause\n- at '/daemon/port': c\n"
	want := "kruise:\n- at '/daemon/port': c\n- at '/manager': validation failed\n  - at '/manager/replicas': a\n    - at '': cause\n  - at '/manager/workers': b\n"
	if got := sortSchemaErrors(in); got != want {
		t.Errorf("sortSchemaErrors:\n%s\nwant:\n%s", got, want)
	}
}

func TestInlineValuesLayerBetweenFilesAndSet(t *testing.T) {
	file := testkit.TempFile(t, "v.yaml", "manager:\n  logLevel: 2\n  replicas: 2\n")
	cases := []struct {
		name string
		o    Options
		want map[string]any
	}{
		{"inline values go over a values file",
			Options{ValueFiles: []string{file}, Values: map[string]any{"manager": map[string]any{"logLevel": 4}}},
			map[string]any{"logLevel": 4, "replicas": 2}},
		{"--set goes over inline values",
			Options{Values: map[string]any{"manager": map[string]any{"logLevel": 4}}, Set: []string{"manager.logLevel=6"}},
			map[string]any{"logLevel": int64(6)}},
		{"inline values alone are taken as given",
			Options{Values: map[string]any{"manager": map[string]any{"replicas": 3}}},
			map[string]any{"replicas": 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := managerValues(t, tc.o)
			if m == nil {
				t.Fatal("no manager values")
			}
			for k, want := range tc.want {
				if fmt.Sprint(m[k]) != fmt.Sprint(want) {
					t.Errorf("manager.%s = %v, want %v", k, m[k], want)
				}
			}
		})
	}
}

// --set-json, --set, --set-string and --set-file apply in Helm's order, each with its own
// typing, and a bad one names its flag.
func TestSetFamilyAppliesInHelmsOrder(t *testing.T) {
	note := testkit.TempFile(t, "note.txt", "from a file")
	cases := []struct {
		name string
		o    Options
		want map[string]string // manager key -> "%T %v"
	}{
		{"--set-string keeps a number a string", Options{SetString: []string{"manager.logLevel=6"}}, map[string]string{"logLevel": "string 6"}},
		{"--set-json takes a JSON object", Options{SetJSON: []string{`manager.podAnnotations={"a":"b"}`}}, map[string]string{"podAnnotations": "map[string]interface {} map[a:b]"}},
		{"--set goes over --set-json", Options{SetJSON: []string{"manager.replicas=1"}, Set: []string{"manager.replicas=2"}}, map[string]string{"replicas": "int64 2"}},
		{"--set-string goes over --set", Options{Set: []string{"manager.logLevel=2"}, SetString: []string{"manager.logLevel=3"}}, map[string]string{"logLevel": "string 3"}},
		{"--set-file reads the file as a string", Options{SetFile: []string{"manager.priorityClassName=" + note}}, map[string]string{"priorityClassName": "string from a file"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := managerValues(t, tc.o)
			for k, want := range tc.want {
				if g := fmt.Sprintf("%T %v", m[k], m[k]); g != want {
					t.Errorf("manager.%s = %s, want %s", k, g, want)
				}
			}
		})
	}
	for flag, o := range map[string]Options{
		"--set-json": {SetJSON: []string{"manager.replicas={"}},
		"--set-file": {SetFile: []string{"manager.priorityClassName=" + filepath.Join(t.TempDir(), "missing")}},
	} {
		_, err := buildValues(o, resolved{})
		var invalid *InvalidError
		if !errors.As(err, &invalid) || !strings.Contains(err.Error(), flag) {
			t.Errorf("bad %s: %v, want bad input naming the flag", flag, err)
		}
	}
}

// daemon.socketLocation is a host directory mounted into the daemon: only the directories
// container runtimes keep their sockets in are accepted, and a refusal names the value.
func TestSocketLocationIsARuntimeSocketDirectory(t *testing.T) {
	ch, err := chartsource.Load(filepath.Join("..", "charts", "kruise"))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		location    string
		wantRefused bool
	}{
		"/var/run, the default, is accepted":                    {location: "/var/run"},
		"/run is accepted":                                      {location: "/run"},
		"containerd's own directory is accepted":                {location: "/run/containerd"},
		"k3s's containerd directory is accepted":                {location: "/run/k3s/containerd"},
		"CRI-O's directory under /var/run is accepted":          {location: "/var/run/crio"},
		"MicroK8s's run directory is accepted":                  {location: "/var/snap/microk8s/common/run"},
		"a trailing slash is accepted":                          {location: "/run/containerd/"},
		"the host's root is refused":                            {location: "/", wantRefused: true},
		"/etc/kubernetes, the control plane's keys, is refused": {location: "/etc/kubernetes", wantRefused: true},
		"/etc is refused":                                       {location: "/etc", wantRefused: true},
		"/proc is refused":                                      {location: "/proc", wantRefused: true},
		"/sys is refused":                                       {location: "/sys", wantRefused: true},
		"/dev is refused":                                       {location: "/dev", wantRefused: true},
		"/root is refused":                                      {location: "/root", wantRefused: true},
		"/var/lib/kubelet, every pod's volumes, is refused":     {location: "/var/lib/kubelet", wantRefused: true},
		"a path that climbs out of /run is refused":             {location: "/run/../etc", wantRefused: true},
		"a path that climbs back into /run is refused":          {location: "/run/containerd/../containerd", wantRefused: true},
		"a name with two dots is refused":                       {location: "/run/a..b", wantRefused: true},
		"a current-directory segment is refused":                {location: "/run/./containerd", wantRefused: true},
		"a directory that only starts like /run is refused":     {location: "/runtime", wantRefused: true},
		"a relative path is refused":                            {location: "run/containerd", wantRefused: true},
		"/tmp is refused":                                       {location: "/tmp", wantRefused: true},
		"a double slash is refused":                             {location: "/run//containerd", wantRefused: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := validateSchema(ch, map[string]any{"daemon": map[string]any{"socketLocation": tc.location}})
			if !tc.wantRefused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !IsInvalid(err) {
				t.Fatalf("validateSchema: %v, want an InvalidError", err)
			}
			for _, part := range []string{"/daemon/socketLocation", "'" + tc.location + "'", "/run", "/var/run"} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("the error does not say %q:\n%v", part, err)
				}
			}
		})
	}
}

// TestInstallerPresetsTurnImagePullJobGateOnWithTheDaemon: what `kruise-addon install` applies
// with each spec preset runs the manager with ImagePullJobGate on while the daemon runs, so image
// pre-pull and scheduled pre-pull work after a default install; --daemon=false turns it off.
func TestInstallerPresetsTurnImagePullJobGateOnWithTheDaemon(t *testing.T) {
	cases := map[string]struct {
		opts      Options
		wantGates string
	}{
		"the small preset turns it on":                     {opts: Options{Spec: &SpecChoice{Preset: spec.Small}}, wantGates: "ImagePullJobGate=true"},
		"the large preset turns it on":                     {opts: Options{Spec: &SpecChoice{Preset: spec.Large}}, wantGates: "ImagePullJobGate=true"},
		"--daemon=false turns the daemon and the gate off": {opts: Options{Daemon: ptr.To(false)}, wantGates: "KruiseDaemon=false"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Render(context.Background(), RenderOptions{Options: withTestRegistry(tc.opts)})
			if err != nil {
				t.Fatal(err)
			}
			gates := ""
			for _, a := range managerDeployment(t, out).Spec.Template.Spec.Containers[0].Args {
				if v, ok := strings.CutPrefix(a, "--feature-gates="); ok {
					gates = v
				}
			}
			if gates != tc.wantGates {
				t.Errorf("the manager's --feature-gates: got %q, want %q", gates, tc.wantGates)
			}
		})
	}
}

// managerValues are the manager's values that buildValues makes of o, nil when none.
func managerValues(t *testing.T, o Options) map[string]any {
	t.Helper()
	got, err := buildValues(o, resolved{})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := got["manager"].(map[string]any)
	return m
}
