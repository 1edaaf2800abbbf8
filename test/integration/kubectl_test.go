package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

const kubectlTimeout = 30 * time.Second

func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
	defer cancel()
	out, stderr, err := env.Kubectl(ctx, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return out
}

func TestKubectlGetCloneShowsTheColumns(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "it-", nil)
	cs := kinds.CloneSet("sample", ns).Replicas(5).Image("nginx:1.27").Obj()
	framework.Create(t, env.Client, cs)
	out := kubectl(t, "get", "clone", "sample", "-n", ns)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want a header and one row, got:\n%s", out)
	}
	if d := cmp.Diff([]string{"NAME", "DESIRED", "UPDATED", "UPDATED_READY", "READY", "TOTAL", "AGE"}, strings.Fields(lines[0])); d != "" {
		t.Errorf("header (-want +got):\n%s", d)
	}
	// No controller runs here, so status is empty and only NAME, DESIRED and AGE have values.
	row := strings.Fields(lines[1])
	if len(row) < 3 || row[0] != "sample" || row[1] != "5" {
		t.Errorf("row = %q, want it to start with sample 5", lines[1])
	}
}

func TestShortNamesResolveToOurKinds(t *testing.T) {
	cases := map[string]struct{ group, kind string }{
		"clone":       {"apps.kruise.io", "CloneSet"},
		"daemon":      {"apps.kruise.io", "DaemonSet"},
		"ads":         {"apps.kruise.io", "DaemonSet"},
		"ud":          {"apps.kruise.io", "UnitedDeployment"},
		"ws":          {"apps.kruise.io", "WorkloadSpread"},
		"crr":         {"apps.kruise.io", "ContainerRecreateRequest"},
		"bcj":         {"apps.kruise.io", "BroadcastJob"},
		"acj":         {"apps.kruise.io", "AdvancedCronJob"},
		"distributor": {"apps.kruise.io", "ResourceDistribution"},
		"asts":        {"apps.kruise.io", "StatefulSet"},
		"pub":         {"policy.kruise.io", "PodUnavailableBudget"},
		// "sts" is also the short name of apps/v1 StatefulSet, and kubectl prefers the built-in
		// group; users reach ours through "asts" or "statefulsets.apps.kruise.io".
		"sts": {"apps", "StatefulSet"},
	}
	for short, want := range cases {
		t.Run(short, func(t *testing.T) {
			// The apiserver publishes a new CRD's OpenAPI schema a moment after the CRD is
			// established, and kubectl explain reads that schema: ask again until it is there.
			var out string
			framework.Eventually(t, kubectlTimeout, "kubectl explain "+short+" finds the schema", func(ctx context.Context) error {
				stdout, stderr, err := env.Kubectl(ctx, "explain", short)
				if err != nil {
					return fmt.Errorf("%w: %s", err, stderr)
				}
				out = stdout
				return nil
			})
			if !strings.Contains(out, "KIND:") || !containsField(out, "KIND:", want.kind) || !containsField(out, "GROUP:", want.group) {
				t.Errorf("kubectl explain %s does not name %s/%s:\n%s", short, want.group, want.kind, firstLines(out, 4))
			}
		})
	}
}

func TestKubectlScaleCloneSetChangesReplicas(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "it-", nil)
	cs := kinds.CloneSet("scaled", ns).Replicas(1).Obj()
	framework.Create(t, env.Client, cs)
	kubectl(t, "scale", "clone/scaled", "-n", ns, "--replicas=3")
	framework.Eventually(t, kubectlTimeout, "spec.replicas becomes 3", func(ctx context.Context) error {
		got := &appsv1alpha1.CloneSet{}
		if err := env.Client.Get(ctx, objectKey(ns, "scaled"), got); err != nil {
			return err
		}
		return framework.Want(got.Spec.Replicas != nil && *got.Spec.Replicas == 3, fmt.Sprintf("spec.replicas is %v", ptr.Deref(got.Spec.Replicas, -1)))
	})
}

// containsField reports whether a line starting with label carries value as its field.
func containsField(out, label, value string) bool {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && f[0] == label && f[1] == value {
			return true
		}
	}
	return false
}

func firstLines(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, "\n")
}
