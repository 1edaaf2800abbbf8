package installer

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/cli"
	"github.com/kruise-addon/kruise-addon/installer/server/servertest"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework"
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
	var out, errOut servertest.Buffer
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

// A value the schema and the templates accept but the apiserver refuses (here a platform's
// admission policy against host-network Deployments) is bad input naming the object and the
// apiserver's reason, and nothing is applied: no release, no Deployment.
func TestAValueTheApiserverRefusesIsBadInputWithNothingApplied(t *testing.T) {
	ctx, i, ns := releaseTest(t, "kruise-dryrun")
	why := refuseHostNetworkIn(t, ns)

	_, err := i.Install(ctx, installer.Options{Namespace: ns, Set: testSet("manager.hostNetwork=true"), Timeout: installTimeout})
	var invalid *installer.InvalidError
	if !errors.As(err, &invalid) {
		t.Fatalf("install: %v, want bad input", err)
	}
	if missing := testkit.Missing(err.Error(), "Deployment "+ns+"/kruise-controller-manager", why, "nothing was applied"); missing != nil {
		t.Errorf("error %q lacks %q", err, missing)
	}
	if r := lastReleaseOrNil(t, ns); r != nil {
		t.Errorf("a release was stored: revision %d %s", r.Version, r.Info.Status)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kruise-controller-manager"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("manager Deployment after the refused install: %v, want NotFound", err)
	}
}

// refuseHostNetworkIn creates namespace and an admission policy that refuses host-network
// Deployments in it, as a platform's would, waits until the apiserver enforces it, and returns
// the refusal's message. The test's cleanup removes all three.
func refuseHostNetworkIn(t *testing.T, ns string) string {
	t.Helper()
	why := "host network is not allowed in " + ns
	framework.Create(t, env.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-host-network-" + ns},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "object.metadata.namespace != '" + ns + "' || !has(object.spec.template.spec.hostNetwork) || !object.spec.template.spec.hostNetwork",
				Message:    why,
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: policy.Name, ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	framework.Create(t, env.Client, policy)
	framework.Create(t, env.Client, binding)
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), binding)
		_ = env.Client.Delete(context.Background(), policy)
		_ = env.Client.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
	// The apiserver loads a new policy in the background: wait until it refuses.
	framework.Eventually(t, settleTimeout, "the policy refuses a host-network Deployment", func(ctx context.Context) error {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
					Spec: corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{{Name: "c", Image: "c"}}}}}}
		err := env.Client.Create(ctx, d, client.DryRunAll)
		return framework.Want(apierrors.IsInvalid(err) || apierrors.IsForbidden(err), "not refused yet")
	})
	return why
}
