package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/yaml"

	"github.com/kruise-addon/kruise-addon/installer"
)

// chartManagerEnv is the environment the chart's default render gives the manager container in
// namespace ns, resolved as the kubelet would (fieldRef metadata.namespace, resourceFieldRef
// limits.* in the divisor's units), so that the bench's manager runs with the Go runtime
// settings a user's does. BENCH_MANAGER_ENV (space-separated NAME=value) adds to or overrides
// it, to compare other settings in one run.
func chartManagerEnv(ctx context.Context, ns string) ([]string, error) {
	manifest, err := installer.Render(ctx, installer.RenderOptions{Options: installer.Options{Set: []string{benchRegistry}}})
	if err != nil {
		return nil, fmt.Errorf("render the chart: %w", err)
	}
	var c *corev1.Container
	for _, doc := range releaseutil.SplitManifests(manifest) {
		d := &appsv1.Deployment{}
		if err := yaml.Unmarshal([]byte(doc), d); err != nil || d.Kind != "Deployment" || d.Name != "kruise-controller-manager" {
			continue
		}
		for i := range d.Spec.Template.Spec.Containers {
			if d.Spec.Template.Spec.Containers[i].Name == "manager" {
				c = &d.Spec.Template.Spec.Containers[i]
			}
		}
	}
	if c == nil {
		return nil, fmt.Errorf("the chart's render has no container manager in Deployment kruise-controller-manager")
	}
	var env []string
	for _, e := range c.Env {
		v, err := resolveEnv(e, c, ns)
		if err != nil {
			return nil, err
		}
		env = append(env, e.Name+"="+v)
	}
	for _, kv := range strings.Fields(os.Getenv("BENCH_MANAGER_ENV")) {
		env = setEnv(env, kv)
	}
	return env, nil
}

// setEnv is env with kv (NAME=value) in place of any earlier value of NAME.
func setEnv(env []string, kv string) []string {
	name, _, _ := strings.Cut(kv, "=")
	env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, name+"=") })
	return append(env, kv)
}

// resolveEnv is the value the kubelet gives e in container c of a pod in namespace ns.
func resolveEnv(e corev1.EnvVar, c *corev1.Container, ns string) (string, error) {
	switch {
	case e.ValueFrom == nil:
		return e.Value, nil
	case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
		return ns, nil
	case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
		// Each process is a pod of its own, named as a Deployment's pods are.
		return "kruise-controller-manager-" + utilrand.String(5), nil
	case e.ValueFrom.ResourceFieldRef != nil:
		ref := e.ValueFrom.ResourceFieldRef
		name, ok := strings.CutPrefix(ref.Resource, "limits.")
		if !ok {
			break
		}
		q, ok := c.Resources.Limits[corev1.ResourceName(name)]
		if !ok {
			return "", fmt.Errorf("env %s: the manager has no limit %s; the kubelet would give the node's allocatable, which the bench cannot know", e.Name, ref.Resource)
		}
		div := int64(1)
		if !ref.Divisor.IsZero() {
			div = ref.Divisor.Value()
		}
		return strconv.FormatInt((q.Value()+div-1)/div, 10), nil
	}
	return "", fmt.Errorf("env %s: the bench cannot resolve %+v as the kubelet would", e.Name, e.ValueFrom)
}

// envString is the manager's environment as a bench line prints it.
func (m *managerProcess) envString() string { return strings.Join(m.env, " ") }
