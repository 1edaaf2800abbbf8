package installer

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/cli"
)

// failingChart copies charts/kruise with one more template that fails when manager.logLevel is
// 7: a value the schema accepts, so only rendering finds the problem.
func failingChart(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "kruise")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("..", "..", "..", "charts", "kruise"))); err != nil {
		t.Fatal(err)
	}
	tpl := `{{- if eq (int .Values.manager.logLevel) 7 }}{{ fail "manager.logLevel 7 is refused by this test chart" }}{{- end }}` + "\n"
	if err := os.WriteFile(filepath.Join(dst, "templates", "zz-test-fail.yaml"), []byte(tpl), 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// runCLI runs kruise-addon in-process against the test cluster.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut syncBuffer
	code = cli.Run(context.Background(), append(args, "--kubeconfig", env.Kubeconfig), &out, &errOut)
	return code, out.String(), errOut.String()
}

// Bad input that only the cluster's version or Helm would catch is found before anything is
// applied: exit code 2, and neither the namespace nor a release exists afterwards.
func TestBadInputAppliesNothing(t *testing.T) {
	chart := failingChart(t)
	cases := map[string]struct {
		namespace  string
		args       []string
		noRegistry bool // install without testSet's imageRegistry
		wantErr    string
	}{
		"no registry for the images, without a bundle": {
			namespace:  "kruise-noregistry",
			args:       []string{"install"},
			noRegistry: true,
			wantErr:    "set imageRegistry (the registry that serves kruise-addon/kruise-manager:",
		},
		"values the schema accepts but a template fails on": {
			namespace: "kruise-tplfail",
			args:      []string{"install", "--chart", chart, "--set", "manager.logLevel=7"},
			wantErr:   "manager.logLevel 7 is refused by this test chart",
		},
		"a CPU request above its limit, which the apiserver refuses only once the pod template is applied": {
			namespace: "kruise-request-limit",
			args:      []string{"install", "--set", "manager.resources.requests.cpu=2", "--set", "manager.resources.limits.cpu=1"},
			wantErr:   "manager.resources.requests.cpu 2 is above manager.resources.limits.cpu 1",
		},
		"a memory limit no node has": {
			namespace: "kruise-memory-limit",
			args:      []string{"install", "--set", "manager.resources.limits.memory=1Ei"},
			wantErr:   "manager.resources.limits.memory 1Ei is out of range",
		},
		"a release name Helm would refuse": {
			namespace: "kruise-badname",
			args:      []string{"install", "--release", "Kruise_Addon"},
			wantErr:   "--release",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			args := append(tc.args, "-n", tc.namespace, "--timeout", installTimeout.String())
			sets := testSet()
			if tc.noRegistry {
				sets = testSetWithoutRegistry()
			}
			for _, s := range sets {
				args = append(args, "--set", s)
			}
			code, _, stderr := runCLI(t, args...)
			if diff := cmp.Diff(cli.ExitInvalid, code); diff != "" {
				t.Errorf("exit code (-want +got):\n%s\nstderr: %s", diff, stderr)
			}
			if !strings.Contains(stderr, tc.wantErr) {
				t.Errorf("the error does not say %q:\n%s", tc.wantErr, stderr)
			}
			if namespaceExists(t, tc.namespace) {
				t.Errorf("namespace %s was created by an install that had bad input", tc.namespace)
			}
			if r, err := helmConfig(t, tc.namespace).Releases.Last(installer.DefaultReleaseName); err == nil {
				t.Errorf("an install with bad input stored release revision %d (%s)", r.Version, r.Info.Status)
			}
		})
	}
}

// With -o json, a preflight that refuses writes exactly one JSON document: the refusal, with
// the report it found.
func TestPreflightRefusalIsOneJSONDocument(t *testing.T) {
	code, stdout, stderr := runCLI(t, "preflight", "-n", "kruise-refused-json", "--spec", "large", "--zone-mode", "required",
		"--node-selector", corev1.LabelTopologyZone+" in ("+zoneA+","+zoneB+")", "-o", "json")
	if diff := cmp.Diff(cli.ExitRefused, code); diff != "" {
		t.Fatalf("exit code (-want +got):\n%s\nstdout:\n%s\nstderr:\n%s", diff, stdout, stderr)
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	var doc struct {
		Error    string                     `json:"error"`
		ExitCode int                        `json:"exitCode"`
		Refused  *installer.RefusedError    `json:"refused"`
		Result   *installer.PreflightResult `json:"result"`
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	var extra any
	if err := dec.Decode(&extra); err != io.EOF {
		t.Fatalf("stdout holds more than one JSON document (next: %v, %v):\n%s", extra, err, stdout)
	}
	got := map[string]any{
		"exitCode":           doc.ExitCode,
		"refusedByPreflight": doc.Refused != nil && doc.Refused.Preflight != nil && doc.Refused.Preflight.Refused(),
		"resultHasReport":    doc.Result != nil && doc.Result.Report.Refused(),
	}
	want := map[string]any{"exitCode": cli.ExitRefused, "refusedByPreflight": true, "resultHasReport": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the JSON document (-want +got):\n%s\n%s", diff, stdout)
	}
}

// An upgrade whose values break a template is bad input too: exit code 2, and the release keeps
// its revision.
func TestUpgradeTemplateFailureAppliesNothing(t *testing.T) {
	const ns = "kruise-tplfail-upgrade"
	i, _ := newInstaller(t)
	if _, err := i.Install(context.Background(), installer.Options{Namespace: ns, Set: testSet(), Timeout: installTimeout, Wait: ptr.To(false)}); err != nil {
		t.Fatalf("install: %v", err)
	}
	t.Cleanup(func() { uninstall(t, i, ns) })
	before := lastRelease(t, ns, installer.DefaultReleaseName).Version

	code, _, stderr := runCLI(t, "upgrade", "-n", ns, "--chart", failingChart(t), "--set", "manager.logLevel=7", "--wait=false")
	if diff := cmp.Diff(cli.ExitInvalid, code); diff != "" {
		t.Errorf("exit code (-want +got):\n%s\nstderr: %s", diff, stderr)
	}
	if !strings.Contains(stderr, "manager.logLevel 7 is refused by this test chart") {
		t.Errorf("the error does not say which template failed:\n%s", stderr)
	}
	if diff := cmp.Diff(before, lastRelease(t, ns, installer.DefaultReleaseName).Version); diff != "" {
		t.Errorf("release revision after the refused upgrade (-want +got):\n%s", diff)
	}
}
