package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/placement"
	"github.com/kruise-addon/kruise-addon/installer/spec"
)

// These commands need no cluster, so their exit codes are checked here; the cluster-facing
// ones are proven in test/integration/installer.
// testRegistry names the images' registry, which the chart leaves to the user.
const testRegistry = "imageRegistry=registry.example.com"

// Without --bundle and without a registry value, no image could be pulled: the command is bad
// input whose message names the value to set, and the bundle way in.
func TestNoRegistryIsBadInputNamingImageRegistry(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Run(context.Background(), []string{"render", "--spec", "small"}, &out, &errOut)
	if diff := cmp.Diff(ExitInvalid, code); diff != "" {
		t.Errorf("exit code (-want +got):\n%s\nstderr: %s", diff, errOut.String())
	}
	for _, want := range []string{"set imageRegistry (the registry that serves kruise-addon/kruise-manager:", "kruise-addon install --bundle"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
}

func TestExitCodes(t *testing.T) {
	cases := map[string]struct {
		args []string
		want int
	}{
		"versions for a cloud cluster string succeeds":                     {args: []string{"versions", "--cluster-version", "v1.30.4-eks-a1b2c3"}, want: ExitOK},
		"versions for a string that is no version is bad input":            {args: []string{"versions", "--cluster-version", "banana"}, want: ExitInvalid},
		"render with defaults and a registry succeeds":                     {args: []string{"render", "--set", testRegistry}, want: ExitOK},
		"render with defaults and no registry is bad input":                {args: []string{"render"}, want: ExitInvalid},
		"render with a value the schema rejects is bad input":              {args: []string{"render", "--set", "manager.replicas=many"}, want: ExitInvalid},
		"render with an unknown preset is bad input":                       {args: []string{"render", "--spec", "medium"}, want: ExitInvalid},
		"--set-string of a number where the schema wants one is bad input": {args: []string{"render", "--set-string", "manager.replicas=2"}, want: ExitInvalid},
		"--set-json of an object renders":                                  {args: []string{"render", "--set", testRegistry, "--set-json", `manager.podAnnotations={"a":"b"}`}, want: ExitOK},
		"--set-file of a missing file is bad input":                        {args: []string{"render", "--set-file", "manager.priorityClassName=/nonexistent/x"}, want: ExitInvalid},
		"overrides on a named preset are bad input":                        {args: []string{"render", "--spec", "large", "--replicas", "5"}, want: ExitInvalid},
		"an unknown toleration effect is bad input":                        {args: []string{"render", "--toleration", "gpu:Sometimes"}, want: ExitInvalid},
		"an unknown output format is bad input":                            {args: []string{"versions", "-o", "yaml"}, want: ExitInvalid},
		"an unknown flag is bad input":                                     {args: []string{"install", "--bogus"}, want: ExitInvalid},
		"a stray argument is bad input":                                    {args: []string{"status", "extra"}, want: ExitInvalid},
		"render from a bundle without a registry is bad input":             {args: []string{"render", "--bundle", "x.tar"}, want: ExitInvalid},
		"a registry without a bundle is bad input":                         {args: []string{"render", "--registry", "127.0.0.1:5000"}, want: ExitInvalid},
		"a file that is not a bundle is bad input":                         {args: []string{"render", "--bundle", "cli.go", "--registry", "127.0.0.1:5000"}, want: ExitInvalid},
		"bundle push without a bundle is bad input":                        {args: []string{"bundle", "push", "--registry", "127.0.0.1:5000"}, want: ExitInvalid},
		"bundle create from a layout that does not exist is bad input":     {args: []string{"bundle", "create", "--images", "no-such-layout"}, want: ExitInvalid},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			got := Run(context.Background(), tc.args, &out, &errOut)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("exit code (-want +got):\n%s\nstderr: %s", diff, errOut.String())
			}
		})
	}
}

func TestVersionsJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Run(context.Background(), []string{"versions", "--cluster-version", "v1.25.3", "-o", "json"}, &out, &errOut); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var res installer.VersionsResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Rows {
		got = append(got, r.Addon)
	}
	if diff := cmp.Diff([]string{"1.0.35", "1.0.23", "1.0.12", "1.0.3"}, got); diff != "" {
		t.Errorf("add-on versions supporting v1.25 (-want +got):\n%s", diff)
	}
}

func TestErrorJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Run(context.Background(), []string{"render", "--set", "manager.replicas=many", "-o", "json"}, &out, &errOut)
	var payload struct {
		Error    string `json:"error"`
		ExitCode int    `json:"exitCode"`
	}
	if err := json.Unmarshal(out.Bytes(), &payload); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out.String())
	}
	if diff := cmp.Diff([]int{ExitInvalid, ExitInvalid}, []int{code, payload.ExitCode}); diff != "" {
		t.Errorf("exit code, JSON exitCode (-want +got):\n%s", diff)
	}
	if !strings.Contains(payload.Error, "/manager/replicas") {
		t.Errorf("error %q does not name the field", payload.Error)
	}
}

func TestSpecFlags(t *testing.T) {
	cases := map[string]struct {
		args          []string
		wantSpec      *installer.SpecChoice
		wantPlacement *placement.Options
	}{
		"no size or placement flag leaves both unchanged (upgrade keeps them)": {args: []string{"--set", "a=b"}},
		"a size flag alone means custom": {
			args:          []string{"--replicas", "2"},
			wantSpec:      &installer.SpecChoice{Preset: spec.Custom, Overrides: spec.Overrides{Replicas: 2}},
			wantPlacement: &placement.Options{PoolLabel: placement.DefaultPoolLabel},
		},
		"placement flags build placement options": {
			args:          []string{"--zone-mode", "even", "--node-pool", "system", "--pool-label", "pool"},
			wantPlacement: &placement.Options{ZoneMode: placement.ZoneEven, Pools: []string{"system"}, PoolLabel: "pool"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := flagOptions(t, tc.args)
			if diff := cmp.Diff(tc.wantSpec, o.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPlacement, o.Placement); diff != "" {
				t.Errorf("placement (-want +got):\n%s", diff)
			}
		})
	}
}

// Names Helm would only reject after the cluster was contacted are bad input up front; the
// error names the flag. No kubeconfig is given: none of these may reach a cluster.
func TestBadNamesAreBadInput(t *testing.T) {
	cases := map[string]struct {
		args     []string
		wantFlag string
	}{
		"a release name with capitals and underscores":    {args: []string{"install", "--release", "Kruise_Addon"}, wantFlag: "--release"},
		"a release name of 54 characters":                 {args: []string{"status", "--release", strings.Repeat("a", 54)}, wantFlag: "--release"},
		"an empty release name":                           {args: []string{"uninstall", "--release", ""}, wantFlag: "--release"},
		"a namespace that is no DNS-1123 label":           {args: []string{"upgrade", "-n", "Kruise.System"}, wantFlag: "--namespace"},
		"a request timeout of zero":                       {args: []string{"status", "--request-timeout", "0s"}, wantFlag: "--request-timeout"},
		"an install timeout of zero":                      {args: []string{"install", "--timeout", "0s"}, wantFlag: "--timeout"},
		"an uninstall timeout below zero":                 {args: []string{"uninstall", "--timeout", "-1m"}, wantFlag: "--timeout"},
		"a release name of 53 characters passes the name": {args: []string{"render", "--set", testRegistry, "--release", strings.Repeat("a", 53)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append(tc.args, "--kubeconfig", "/nonexistent/kubeconfig")
			code := Run(context.Background(), args, &out, &errOut)
			want := ExitInvalid
			if tc.wantFlag == "" {
				want = ExitOK
			}
			if diff := cmp.Diff(want, code); diff != "" {
				t.Errorf("exit code (-want +got):\n%s\nstderr: %s", diff, errOut.String())
			}
			if tc.wantFlag != "" && !strings.Contains(errOut.String(), tc.wantFlag) {
				t.Errorf("the error does not name %s:\n%s", tc.wantFlag, errOut.String())
			}
		})
	}
}

// --nodes takes node names; a value that is not one is bad input before any cluster is read,
// and the error names the flag and the value. Render reads no cluster, so it shows that.
func TestNodesFlagIsValidatedAsNodeNames(t *testing.T) {
	cases := map[string]struct {
		nodes     string
		wantValue string
	}{
		"node names render":                       {nodes: "node-1,ip-10-0-0-1.ec2.internal"},
		"capitals and underscores are bad input":  {nodes: "node-1,Node_B", wantValue: `"Node_B"`},
		"a selector in a node name is bad input":  {nodes: "a=b", wantValue: `"a=b"`},
		"a name above 63 characters is bad input": {nodes: strings.Repeat("n", 64), wantValue: `"` + strings.Repeat("n", 64) + `"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Run(context.Background(), []string{"render", "--set", testRegistry, "--nodes", tc.nodes, "--kubeconfig", "/nonexistent/kubeconfig"}, &out, &errOut)
			want := ExitOK
			if tc.wantValue != "" {
				want = ExitInvalid
			}
			if diff := cmp.Diff(want, code); diff != "" {
				t.Fatalf("exit code (-want +got):\n%s\nstderr: %s", diff, errOut.String())
			}
			if tc.wantValue == "" {
				return
			}
			for _, part := range []string{"--nodes", tc.wantValue} {
				if !strings.Contains(errOut.String(), part) {
					t.Errorf("the error does not name %s:\n%s", part, errOut.String())
				}
			}
		})
	}
}

// oneJSONDocument fails unless out holds exactly one JSON value, and returns it.
func oneJSONDocument(t *testing.T, out string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	var extra any
	if err := dec.Decode(&extra); err != io.EOF {
		t.Fatalf("stdout holds more than one JSON document (next: %v, %v):\n%s", extra, err, out)
	}
	return doc
}

// With -o json, a failing command writes one JSON document: the error in its stable shape.
func TestErrorIsOneJSONDocument(t *testing.T) {
	cases := map[string]struct {
		args     []string
		wantCode int
	}{
		"a value the schema rejects": {args: []string{"render", "--set", "manager.replicas=many"}, wantCode: ExitInvalid},
		"a bad release name":         {args: []string{"status", "--release", "Bad_Name"}, wantCode: ExitInvalid},
		"a cluster that never answers": {
			args: []string{"status", "--request-timeout", "2s", "--kubeconfig", newSilentServer(t).kubeconfig}, wantCode: ExitError,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := runGuarded(t, context.Background(), append(tc.args, "-o", "json"))
			doc := oneJSONDocument(t, got.out)
			if diff := cmp.Diff(float64(tc.wantCode), doc["exitCode"]); diff != "" {
				t.Errorf("exitCode in the document (-want +got):\n%s", diff)
			}
			if msg, _ := doc["error"].(string); msg == "" {
				t.Errorf("no error message in the document:\n%s", got.out)
			}
			if diff := cmp.Diff(tc.wantCode, got.code); diff != "" {
				t.Errorf("exit code (-want +got):\n%s", diff)
			}
		})
	}
}

// --daemon=false renders no daemon and the manager with its KruiseDaemon gate off; the flag
// sits under the values files and --set, like the other computed values.
func TestDaemonFlag(t *testing.T) {
	cases := map[string]struct {
		args           []string
		wantDaemonSet  bool
		wantGateOffArg bool
	}{
		"the daemon runs by default":                         {args: nil, wantDaemonSet: true},
		"--daemon=false drops the daemon and the gate":       {args: []string{"--daemon=false"}, wantGateOffArg: true},
		"--set daemon.enabled=true goes over --daemon=false": {args: []string{"--daemon=false", "--set", "daemon.enabled=true"}, wantDaemonSet: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := Run(context.Background(), append([]string{"render", "--set", testRegistry}, tc.args...), &out, &errOut); code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			m := out.String()
			got := []bool{regexp.MustCompile(`(?m)^kind: DaemonSet$`).MatchString(m), strings.Contains(m, `"--feature-gates=KruiseDaemon=false"`)}
			if diff := cmp.Diff([]bool{tc.wantDaemonSet, tc.wantGateOffArg}, got); diff != "" {
				t.Errorf("DaemonSet rendered, manager gate off (-want +got):\n%s", diff)
			}
		})
	}
}

// --wait reaches the library as it is typed, one boolean with one meaning: on waits (the
// default), off only applies.
func TestWaitFlagReachesOptionsAsTyped(t *testing.T) {
	cases := map[string]struct {
		args     []string
		wantWait bool
	}{
		"without --wait the command waits": {args: nil, wantWait: true},
		"--wait=false only applies":        {args: []string{"--wait=false"}, wantWait: false},
		"--wait waits":                     {args: []string{"--wait"}, wantWait: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := flagOptions(t, tc.args)
			if o.Wait == nil {
				t.Fatalf("Wait is unset; want %t as the flag says", tc.wantWait)
			}
			if diff := cmp.Diff(tc.wantWait, *o.Wait); diff != "" {
				t.Errorf("Wait (-want +got):\n%s", diff)
			}
		})
	}
}

// flagOptions is the library options that the spec flags in args give.
func flagOptions(t *testing.T, args []string) installer.Options {
	t.Helper()
	f := &specFlags{}
	cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
	f.register(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	o, err := f.options(cmd, &globalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}
