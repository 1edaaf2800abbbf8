package framework_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/test/framework"
)

// widgetCRD is a CRD of a test-only group, for the extra-dirs option.
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.test.kruise-addon.io
spec:
  group: test.kruise-addon.io
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

func TestStartAndStop(t *testing.T) {
	crdDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(crdDir, "widgets.yaml"), []byte(widgetCRD), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := framework.Start(framework.WithCRDDirs(crdDir), framework.WithStartTimeout(startTimeout))
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = e.Stop() })
	dir := e.Dir

	t.Run("etcd and kube-apiserver run from the work dir", func(t *testing.T) {
		if d := cmp.Diff([]string{"etcd", "kube-apiserver"}, procNames(processesUsing(t, dir))); d != "" {
			t.Errorf("processes (-want +got):\n%s", d)
		}
	})
	t.Run("a CRD of an extra dir is Established when Start returns", func(t *testing.T) {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := e.Client.Get(context.Background(), client.ObjectKey{Name: "widgets.test.kruise-addon.io"}, &crd); err != nil {
			t.Fatalf("get crd: %v", err)
		}
		established := false
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				established = true
			}
		}
		if !established {
			t.Errorf("conditions = %+v, want Established", crd.Status.Conditions)
		}
	})
	t.Run("Stop leaves no process behind and removes the work dir", func(t *testing.T) {
		if err := e.Stop(); err != nil {
			t.Fatalf("stop: %v", err)
		}
		framework.Eventually(t, processExitTimeout, "control-plane processes exit", func(context.Context) error {
			if ps := processesUsing(t, dir); len(ps) > 0 {
				return fmt.Errorf("still running: %v", ps)
			}
			return nil
		})
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("work dir %s still there (stat: %v)", dir, err)
		}
		if err := e.Stop(); err != nil {
			t.Errorf("a second Stop: %v", err)
		}
	})
}

// TestControlPlaneDiesWithAKilledTestBinary kills, with SIGKILL, a test binary that holds a
// control plane and never called Stop: its etcd and kube-apiserver must go with it.
func TestControlPlaneDiesWithAKilledTestBinary(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FRAMEWORK_TEST_HOLD_CONTROL_PLANE=1")
	stdin, err := cmd.StdinPipe() // never written: the helper blocks on it
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	lines := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			if strings.HasPrefix(s.Text(), "dir=") || strings.HasPrefix(s.Text(), "error=") {
				lines <- s.Text()
				return
			}
		}
		close(lines)
	}()
	var dir string
	select {
	case line, ok := <-lines:
		if !ok || !strings.HasPrefix(line, "dir=") {
			t.Fatalf("helper did not start a control plane: %q\n%s", line, stderr.String())
		}
		dir = strings.TrimPrefix(line, "dir=")
	case <-time.After(startTimeout):
		t.Fatalf("helper did not report within %v\n%s", startTimeout, stderr.String())
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) }) // nobody else removes a killed owner's files

	if d := cmp.Diff([]string{"etcd", "kube-apiserver"}, procNames(processesUsing(t, dir))); d != "" {
		t.Fatalf("helper's processes (-want +got):\n%s", d)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatalf("kill helper: %v", err)
	}
	_ = cmd.Wait()
	framework.Eventually(t, processExitTimeout, "the killed binary's etcd and kube-apiserver exit", func(context.Context) error {
		if ps := processesUsing(t, dir); len(ps) > 0 {
			return fmt.Errorf("still running: %v", ps)
		}
		return nil
	})
}

func TestKubectlTalksToTheControlPlane(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	out, stderr, err := env.Kubectl(ctx, "get", "namespace", "default", "-o", "name")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if got := strings.TrimSpace(out); got != "namespace/default" {
		t.Errorf("kubectl get namespace default = %q, want namespace/default", got)
	}
}

func TestCRDDirIsTheChartsCRDFolder(t *testing.T) {
	dir := framework.CRDDir()
	if !filepath.IsAbs(dir) {
		t.Errorf("CRDDir() = %q, want an absolute path", dir)
	}
	if want := filepath.Join("charts", "kruise", "files", "crds"); !strings.HasSuffix(dir, want) {
		t.Errorf("CRDDir() = %q, want it to end in %s", dir, want)
	}
	// The chart's files folder is in the repository even before CRDs are generated into it.
	if _, err := os.Stat(filepath.Dir(dir)); err != nil {
		t.Errorf("the chart folder of CRDDir(): %v", err)
	}
}
