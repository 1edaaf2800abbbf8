package daemonset

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func TestKubectlGetAdsShowsTheColumnsWithTheStatus(t *testing.T) {
	ns := newNamespace(t)
	createDaemonSet(t, kinds.DaemonSet("columns", ns).Image(imageV1).Obj())
	waitRolledOut(t, ns, "columns", imageV1, baseNodeNames(), framework.Medium)

	kubectl := func(args ...string) []string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), framework.Short)
		defer cancel()
		out, stderr, err := env.Kubectl(ctx, args...)
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 {
			t.Fatalf("want a header and one row, got:\n%s", out)
		}
		return lines
	}
	lines := kubectl("get", "ads", "columns", "-n", ns)
	if d := cmp.Diff([]string{"NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"}, strings.Fields(lines[0])); d != "" {
		t.Errorf("header (-want +got):\n%s", d)
	}
	n := fmt.Sprint(baseNodes)
	if d := cmp.Diff([]string{"columns", n, n, n, n, n}, strings.Fields(lines[1])[:6]); d != "" {
		t.Errorf("row (-want +got):\n%s", d)
	}
	wide := kubectl("get", "daemon", "columns", "-n", ns, "-o", "wide")
	if d := cmp.Diff([]string{"NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES"}, strings.Fields(wide[0])); d != "" {
		t.Errorf("wide header (-want +got):\n%s", d)
	}
	if row := strings.Fields(wide[1]); row[len(row)-2] != "main" || row[len(row)-1] != imageV1 {
		t.Errorf("wide row %q, want it to end with main %s", wide[1], imageV1)
	}
}
