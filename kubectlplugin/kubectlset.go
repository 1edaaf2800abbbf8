package kubectlplugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/cmd/set"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/polymorphichelpers"
	kubectlscheme "k8s.io/kubectl/pkg/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/apis"
)

// teachKubectl makes kubectl's commands know the add-on's kinds: their types join kubectl's
// scheme, and kubectl's per-kind hooks (pod spec, selector, ports, protocols, exposable, the
// pod to exec into) see each of them as a Deployment with its selector and template. These are
// process-wide hooks kubectl offers for this, so they are set once.
var teachKubectl = sync.OnceFunc(func() {
	utilruntime.Must(apis.AddToScheme(kubectlscheme.Scheme))
	nextSpec := polymorphichelpers.UpdatePodSpecForObjectFn
	polymorphichelpers.UpdatePodSpecForObjectFn = func(obj runtime.Object, fn func(*corev1.PodSpec) error) (bool, error) {
		if k := kindOfObject(obj); k != nil {
			return true, fn(&k.template(obj.(client.Object)).Spec)
		}
		return nextSpec(obj, fn)
	}
	nextExposed := polymorphichelpers.CanBeExposedFn
	polymorphichelpers.CanBeExposedFn = func(gk schema.GroupKind) error {
		for _, k := range kinds() {
			if k.gvk.GroupKind() == gk {
				return nil
			}
		}
		return nextExposed(gk)
	}
	polymorphichelpers.MapBasedSelectorForObjectFn = asDeployment(polymorphichelpers.MapBasedSelectorForObjectFn)
	polymorphichelpers.MultiProtocolsForObjectFn = asDeployment(polymorphichelpers.MultiProtocolsForObjectFn)
	polymorphichelpers.PortsForObjectFn = asDeployment(polymorphichelpers.PortsForObjectFn)
	nextPod := polymorphichelpers.AttachablePodForObjectFn
	polymorphichelpers.AttachablePodForObjectFn = func(g genericclioptions.RESTClientGetter, obj runtime.Object, timeout time.Duration) (*corev1.Pod, error) {
		return nextPod(g, standIn(obj), timeout)
	}
})

// asDeployment has kubectl's hook next read one of the add-on's kinds as a Deployment.
func asDeployment[T any](next func(runtime.Object) (T, error)) func(runtime.Object) (T, error) {
	return func(obj runtime.Object) (T, error) { return next(standIn(obj)) }
}

// standIn is the Deployment with the namespace, name, selector and template of obj when obj
// is one of the add-on's kinds, else obj itself.
func standIn(obj runtime.Object) runtime.Object {
	k := kindOfObject(obj)
	if k == nil {
		return obj
	}
	o := obj.(client.Object)
	sel := k.selector(o)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: o.GetName()},
		Spec:       appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: *k.template(o)},
	}
}

// kindOfObject is the add-on kind obj is, or nil.
func kindOfObject(obj runtime.Object) *kind {
	for _, k := range kinds() {
		if reflect.TypeOf(k.newObject()) == reflect.TypeOf(obj) {
			return k
		}
	}
	return nil
}

// kubectlSetCommands are kubectl's set subcommands that change a pod template, with what they
// print once done; on the add-on's kinds they run as described at kubectlSet.
var kubectlSetCommands = []struct {
	build     kubectlCommand
	operation string
}{
	{set.NewCmdEnv, "env updated"},
	{set.NewCmdResources, "resource requirements updated"},
	{set.NewCmdServiceAccount, "serviceaccount updated"},
}

// kubectlSet is one of kubectl's set commands, with its flags and help. On built-in kinds it
// runs as under kubectl. The add-on's kinds take no strategic merge patch, which kubectl's
// commands write, so on them kubectl's command only computes the new objects (a client dry
// run), and the plugin writes each as a merge patch and prints what kubectl would.
func kubectlSet(o *Options, build kubectlCommand, operation string) *cobra.Command {
	out := &switchWriter{}
	k := build(cmdutil.NewFactory(cmdutil.NewMatchVersionFlags(o.ConfigFlags)),
		genericiooptions.IOStreams{In: o.Streams.In, Out: out, ErrOut: o.Streams.ErrOut})
	run := k.Run
	k.Run = nil
	k.RunE = func(cmd *cobra.Command, args []string) error {
		out.w = cmd.OutOrStdout()
		if _, err := namesNative(args); err != nil {
			return err
		}
		fs := cmd.Flags()
		if !namesOurs(args) || fs.Changed("local") || fs.Changed("dry-run") || fs.Changed("list") {
			return runKubectl(func() { run(cmd, args) })
		}
		output, err := fs.GetString("output")
		if err != nil {
			return err
		}
		var computed bytes.Buffer
		out.w = &computed
		for name, v := range map[string]string{"dry-run": "client", "output": "json"} {
			if err := fs.Set(name, v); err != nil {
				return err
			}
		}
		if err := runKubectl(func() { run(cmd, qualifyOurs(args)) }); err != nil {
			return err
		}
		s, err := o.session()
		if err != nil {
			return err
		}
		pf := newPrintFlags(operation)
		pf.OutputFormat = &output
		return s.writeComputed(cmd, &computed, pf, operation)
	}
	return k
}

// writeComputed writes the pod template of each object kubectl computed as a merge patch
// against the object as it is now, and prints it. Only the template is taken: the commands
// change nothing else, and the controllers' status writes since kubectl read the object must
// not turn into a conflict.
func (s *session) writeComputed(cmd *cobra.Command, computed io.Reader, pf *genericclioptions.PrintFlags, operation string) error {
	decoder := serializer.NewCodecFactory(s.scheme).UniversalDeserializer()
	stream := json.NewDecoder(computed)
	var errs []error
	for {
		var raw json.RawMessage
		if err := stream.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("read kubectl's result: %w", err)
		}
		decoded, _, err := decoder.Decode(raw, nil, nil)
		if err != nil {
			return fmt.Errorf("decode kubectl's result: %w", err)
		}
		k := kindOfObject(decoded)
		if k == nil {
			return fmt.Errorf("kubectl's result %T is not one of the add-on's kinds: give built-in workloads in a command of their own", decoded)
		}
		computed := decoded.(client.Object)
		obj, changed, err := s.change(cmd.Context(), target{kind: k, name: computed.GetName()}, func(obj client.Object) error {
			*k.template(obj) = *k.template(computed)
			return nil
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if changed {
			if err := s.printObject(pf, operation, obj, cmd.OutOrStdout()); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return utilerrors.NewAggregate(errs)
}

// namesOurs tells whether the first resource argument names one of the add-on's kinds.
func namesOurs(args []string) bool {
	if len(args) == 0 {
		return false
	}
	typ, _, _ := strings.Cut(args[0], "/")
	_, err := lookupKind(typ)
	return err == nil
}

// qualifyOurs spells the add-on's types in the arguments as resource.version.group, so that
// kubectl resolves "statefulset" and "sts" to the Advanced StatefulSet as the plugin does.
func qualifyOurs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		typ, name, slash := strings.Cut(a, "/")
		if !slash && i > 0 {
			continue
		}
		k, err := lookupKind(typ)
		if err != nil {
			continue
		}
		q := k.resource + "." + k.gvk.Version + "." + k.gvk.Group
		if slash {
			q += "/" + name
		}
		out[i] = q
	}
	return out
}

// switchWriter writes to w, chosen when a command runs.
type switchWriter struct{ w io.Writer }

func (s *switchWriter) Write(p []byte) (int, error) { return s.w.Write(p) }
