package kubectlplugin

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/kubectlplugin"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// settle bounds a rollout of a few pods on the simulated nodes.
const settle = framework.Long

// result is what one run of the plugin or of kubectl printed, and how it exited.
type result struct {
	out, errOut string
	failed      bool
}

// plugin runs kubectl-kruise in process against the test control plane, in namespace ns.
func plugin(t *testing.T, ns string, args ...string) result {
	t.Helper()
	return pluginWith(t, ns, nil, args...)
}

// pluginWith is plugin with the clock now (nil: the real one).
func pluginWith(t *testing.T, ns string, now func() time.Time, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	full := append([]string{"--kubeconfig", env.Kubeconfig, "-n", ns}, args...)
	o := kubectlplugin.NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if now != nil {
		o.Now = now
	}
	code := kubectlplugin.RunWith(context.Background(), full, o)
	t.Logf("kubectl-kruise %s -> %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	return result{out: out.String(), errOut: errOut.String(), failed: code != 0}
}

// kubectl runs the real kubectl of the test assets in namespace ns.
func kubectl(t *testing.T, ns string, args ...string) result {
	t.Helper()
	out, errOut, err := env.Kubectl(context.Background(), append([]string{"-n", ns}, args...)...)
	t.Logf("kubectl %s -> %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	return result{out: out, errOut: errOut, failed: err != nil}
}

// workload is one of the plugin's kinds under test, with the built-in kind kubectl words its
// status for.
type workload struct {
	// typ is what the plugin is given, e.g. "cloneset".
	typ string
	// qualified is how the plugin prints the kind, e.g. "cloneset.apps.kruise.io".
	qualified string
	// native is the built-in resource whose rollout status wording the kind shares.
	native string
	// nativeQualified is how kubectl prints that built-in kind.
	nativeQualified string
	// scalable is false for a DaemonSet.
	scalable bool
	newObj   func(ns string) client.Object
	empty    func() client.Object
	template func(client.Object) (image string, annotations map[string]string)
	done     func(client.Object) error
	// nativeObj is the built-in counterpart, run by kube-controller-manager.
	nativeObj func(ns string) client.Object
}

const (
	oldImage = "nginx:1.0"
	newImage = "nginx:2.0"
)

// templateOf is a workload's template function for the kind whose pod template spec returns.
func templateOf[T client.Object](spec func(T) corev1.PodTemplateSpec) func(client.Object) (string, map[string]string) {
	return func(o client.Object) (string, map[string]string) {
		t := spec(o.(T))
		return t.Spec.Containers[0].Image, t.Annotations
	}
}

func workloads() []workload {
	return []workload{
		{
			typ: "cloneset", qualified: "cloneset.apps.kruise.io", native: "deployment", nativeQualified: "deployment.apps", scalable: true,
			newObj: func(ns string) client.Object {
				return kinds.CloneSet("web", ns).Replicas(3).Image(oldImage).UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).Obj()
			},
			empty:    func() client.Object { return &appsv1alpha1.CloneSet{} },
			template: templateOf(func(o *appsv1alpha1.CloneSet) corev1.PodTemplateSpec { return o.Spec.Template }),
			done: func(o client.Object) error {
				cs := o.(*appsv1alpha1.CloneSet)
				want := *cs.Spec.Replicas
				st := cs.Status
				return framework.Want(st.ObservedGeneration == cs.Generation && st.Replicas == want && st.UpdatedReplicas == want && st.UpdatedAvailableReplicas == want,
					fmt.Sprintf("cloneset status %+v, want %d updated and available", st, want))
			},
			nativeObj: func(ns string) client.Object {
				cs := kinds.CloneSet("web", ns).Replicas(3).Image(oldImage).Obj()
				return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
					Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: cs.Spec.Selector, Template: cs.Spec.Template}}
			},
		},
		{
			typ: "asts", qualified: "statefulset.apps.kruise.io", native: "statefulset", nativeQualified: "statefulset.apps", scalable: true,
			newObj: func(ns string) client.Object {
				s := kinds.StatefulSet("web", ns).Replicas(3).Image(oldImage).PodUpdatePolicy(appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType).Obj()
				s.Spec.Template.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}
				return s
			},
			empty:    func() client.Object { return &appsv1beta1.StatefulSet{} },
			template: templateOf(func(o *appsv1beta1.StatefulSet) corev1.PodTemplateSpec { return o.Spec.Template }),
			done: func(o client.Object) error {
				s := o.(*appsv1beta1.StatefulSet)
				want := *s.Spec.Replicas
				st := s.Status
				return framework.Want(st.ObservedGeneration == s.Generation && st.Replicas == want && st.UpdatedReplicas == want && st.ReadyReplicas == want && st.CurrentRevision == st.UpdateRevision,
					fmt.Sprintf("statefulset status %+v, want %d updated and ready at one revision", st, want))
			},
			nativeObj: func(ns string) client.Object {
				s := kinds.StatefulSet("web", ns).Replicas(3).Image(oldImage).Obj()
				return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
					Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), Selector: s.Spec.Selector, Template: s.Spec.Template, ServiceName: "web"}}
			},
		},
		{
			typ: "ads", qualified: "daemonset.apps.kruise.io", native: "daemonset", nativeQualified: "daemonset.apps",
			newObj: func(ns string) client.Object {
				return kinds.DaemonSet("web", ns).Image(oldImage).Obj()
			},
			empty:    func() client.Object { return &appsv1alpha1.DaemonSet{} },
			template: templateOf(func(o *appsv1alpha1.DaemonSet) corev1.PodTemplateSpec { return o.Spec.Template }),
			done: func(o client.Object) error {
				d := o.(*appsv1alpha1.DaemonSet)
				st := d.Status
				return framework.Want(st.ObservedGeneration == d.Generation && st.DesiredNumberScheduled == nodeCount && st.UpdatedNumberScheduled == nodeCount && st.NumberAvailable == nodeCount,
					fmt.Sprintf("daemonset status %+v, want %d updated and available", st, nodeCount))
			},
			nativeObj: func(ns string) client.Object {
				d := kinds.DaemonSet("web", ns).Image(oldImage).Obj()
				return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
					Spec: appsv1.DaemonSetSpec{Selector: d.Spec.Selector, Template: d.Spec.Template}}
			},
		},
	}
}

// get reads the workload named web in ns.
func (w workload) get(t *testing.T, ns string) client.Object {
	t.Helper()
	obj := w.empty()
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, obj); err != nil {
		t.Fatalf("get %s web: %v", w.typ, err)
	}
	return obj
}

// waitDone waits until the workload's controller has rolled out the current spec of web.
func (w workload) waitDone(t *testing.T, ns string) {
	t.Helper()
	w.waitDoneNamed(t, ns, "web")
}

// waitDoneNamed waits until the workload's controller has rolled out the current spec of name.
func (w workload) waitDoneNamed(t *testing.T, ns, name string) {
	t.Helper()
	framework.Eventually(t, settle, w.typ+" "+name+" rolled out", func(ctx context.Context) error {
		obj := w.empty()
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			return err
		}
		return w.done(obj)
	})
}

// deploymentDone waits until kube-controller-manager has rolled out the Deployment web.
func deploymentDone(t *testing.T, ns string) {
	t.Helper()
	framework.Eventually(t, settle, "deployment rolled out", func(ctx context.Context) error {
		d := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, d); err != nil {
			return err
		}
		want := *d.Spec.Replicas
		st := d.Status
		return framework.Want(st.ObservedGeneration == d.Generation && st.Replicas == want && st.UpdatedReplicas == want && st.AvailableReplicas == want,
			fmt.Sprintf("deployment status %+v, want %d updated and available", st, want))
	})
}

// asKubectl rewrites the plugin's output for kind w into the words kubectl uses for a
// Deployment, so that the two can be compared byte for byte.
func (w workload) asDeployment(s string) string {
	return strings.ReplaceAll(s, w.qualified+"/", "deployment.apps/")
}

// asDeploymentResource rewrites the plugin's resource name (as errors name it) into the
// Deployment's.
func (w workload) asDeploymentResource(s string) string {
	group := strings.SplitN(w.qualified, ".", 2)[1]
	kind := strings.SplitN(w.qualified, ".", 2)[0]
	return strings.ReplaceAll(s, kind+"s."+group, "deployments.apps")
}

// revisionName hides revision names, which are hashes that differ between kinds.
var revisionName = regexp.MustCompile(`at revision [^ ]+\.\.\.`)

func (w workload) asNative(s string) string {
	s = strings.ReplaceAll(s, w.qualified+"/", w.nativeQualified+"/")
	return revisionName.ReplaceAllString(s, "at revision R...")
}
