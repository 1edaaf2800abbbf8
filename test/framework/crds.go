package framework

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// CRDDir returns the absolute path of charts/kruise/files/crds, where `make manifests`
// generates the CRDs. It is found from this source file, so it works from any package's tests;
// a binary built with -trimpath has no source path and gets a path relative to the module root.
func CRDDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return filepath.Join("charts", "kruise", "files", "crds")
	}
	// file is <root>/test/framework/crds.go.
	return filepath.Join(filepath.Dir(file), "..", "..", "charts", "kruise", "files", "crds")
}

// readCRDs decodes every CustomResourceDefinition in the *.yaml and *.yml files of dir. Other
// kinds in those files are ignored. A missing dir yields none unless mustExist is set.
func readCRDs(dir string, mustExist bool) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	if _, err := os.Stat(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) && !mustExist {
			return nil, nil
		}
		return nil, fmt.Errorf("crd dir: %w", err)
	}
	var files []string
	for _, pattern := range []string{"*.yaml", "*.yml"} {
		m, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return nil, fmt.Errorf("list crd files: %w", err)
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read crd file: %w", err)
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
		for {
			doc, err := reader.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.Unmarshal(doc, crd); err != nil {
				return nil, fmt.Errorf("%s: decode: %w", f, err)
			}
			if crd.Kind != "CustomResourceDefinition" {
				continue
			}
			crds = append(crds, crd)
		}
	}
	return crds, nil
}

// installCRDs creates the CRDs of every dir and waits until all are Established, have their
// names accepted, and appear in discovery (clients resolve kinds through discovery, which can
// lag the condition). The first dir may be missing; the others, when strict, must exist.
func installCRDs(ctx context.Context, c client.Client, cs kubernetes.Interface, dirs []string, strict bool) (int, error) {
	var all []*apiextensionsv1.CustomResourceDefinition
	for i, d := range dirs {
		crds, err := readCRDs(d, strict && i > 0)
		if err != nil {
			return 0, err
		}
		all = append(all, crds...)
	}
	for _, crd := range all {
		if err := c.Create(ctx, crd.DeepCopy()); err != nil {
			if !apierrors.IsAlreadyExists(err) {
				return 0, fmt.Errorf("create crd %s: %w", crd.Name, err)
			}
			// The same CRD in two dirs: the later one wins, as with kubectl apply.
			existing := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(crd), existing); err != nil {
				return 0, fmt.Errorf("get crd %s: %w", crd.Name, err)
			}
			update := crd.DeepCopy()
			update.ResourceVersion = existing.ResourceVersion
			if err := c.Update(ctx, update); err != nil {
				return 0, fmt.Errorf("update crd %s: %w", crd.Name, err)
			}
		}
	}
	if err := waitForCRDs(ctx, c, cs, all); err != nil {
		return 0, err
	}
	return len(all), nil
}

func waitForCRDs(ctx context.Context, c client.Client, cs kubernetes.Interface, crds []*apiextensionsv1.CustomResourceDefinition) error {
	pending := map[string]string{} // name -> why it is not ready yet
	for _, crd := range crds {
		pending[crd.Name] = "not seen yet"
	}
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		for _, want := range crds {
			if _, ok := pending[want.Name]; !ok {
				continue
			}
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
				pending[want.Name] = err.Error()
				continue
			}
			if why := crdNotReady(got); why != "" {
				pending[want.Name] = why
				continue
			}
			if why := notDiscovered(cs, got); why != "" {
				pending[want.Name] = why
				continue
			}
			delete(pending, want.Name)
		}
		return len(pending) == 0, nil
	})
	if err != nil {
		var lines []string
		for name, why := range pending {
			lines = append(lines, name+": "+why)
		}
		sort.Strings(lines)
		return fmt.Errorf("wait for crds: %w:\n%s", err, strings.Join(lines, "\n"))
	}
	return nil
}

// crdNotReady says why a CRD is not usable yet, or "" when it is.
func crdNotReady(crd *apiextensionsv1.CustomResourceDefinition) string {
	var established, accepted bool
	var msgs []string
	for _, cond := range crd.Status.Conditions {
		switch cond.Type {
		case apiextensionsv1.Established:
			established = cond.Status == apiextensionsv1.ConditionTrue
		case apiextensionsv1.NamesAccepted:
			accepted = cond.Status == apiextensionsv1.ConditionTrue
		}
		if cond.Status != apiextensionsv1.ConditionTrue && cond.Message != "" {
			msgs = append(msgs, fmt.Sprintf("%s: %s", cond.Type, cond.Message))
		}
	}
	switch {
	case !accepted:
		return "names not accepted " + strings.Join(msgs, "; ")
	case !established:
		return "not established " + strings.Join(msgs, "; ")
	}
	return ""
}

// notDiscovered says which served version of the CRD discovery does not list yet.
func notDiscovered(cs kubernetes.Interface, crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		gv := crd.Spec.Group + "/" + v.Name
		list, err := cs.Discovery().ServerResourcesForGroupVersion(gv)
		if err != nil {
			return fmt.Sprintf("discovery of %s: %v", gv, err)
		}
		found := false
		for _, r := range list.APIResources {
			if r.Name == crd.Spec.Names.Plural {
				found = true
				break
			}
		}
		if !found {
			return fmt.Sprintf("%s not in discovery of %s", crd.Spec.Names.Plural, gv)
		}
	}
	return ""
}
