package kubectlplugin

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubectl/pkg/cmd/exec"
	"k8s.io/kubectl/pkg/cmd/expose"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/polymorphichelpers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// newExposeCommand is kubectl's expose, which also exposes the add-on's kinds by their
// selector and their template's ports.
func newExposeCommand(o *Options) *cobra.Command {
	k := asKubectl(o, expose.NewCmdExposeService)
	run := k.RunE
	k.RunE = func(cmd *cobra.Command, args []string) error { return run(cmd, qualifyOurs(args)) }
	k.Short = "Expose a CloneSet, Advanced StatefulSet or Advanced DaemonSet, or what kubectl exposes, as a new Kubernetes service"
	k.Example = `  # Create a service for the CloneSet web, on port 80 to the containers' port 8080
  kubectl kruise expose cloneset web --port=80 --target-port=8080

  # Create a service for the Advanced StatefulSet db, on the ports its template declares
  kubectl kruise expose asts/db`
	return k
}

// newExecCommand is kubectl's exec, which also takes the add-on's kinds (a pod of theirs is
// chosen as kubectl chooses one of a Deployment's) and -S: the container of a SidecarSet
// sidecar, which for a hot-upgrade sidecar is the one now working.
func newExecCommand(o *Options) *cobra.Command {
	var sidecar string
	f := cmdutil.NewFactory(cmdutil.NewMatchVersionFlags(o.ConfigFlags))
	k := exec.NewCmdExec(f, o.Streams)
	run := k.Run
	k.Run = nil
	k.Use = "exec (POD | TYPE/NAME) [-c CONTAINER | -S SIDECAR] [flags] -- COMMAND [args...]"
	k.Short = "Execute a command in a container of a pod or of a workload's pod, or in a SidecarSet sidecar"
	k.Example = `  # Run date in the container main of pod web-0
  kubectl kruise exec web-0 -c main -- date

  # Run a shell in the working container of the hot-upgrade sidecar log-agent of a CloneSet's pod
  kubectl kruise exec cloneset/web -S log-agent -it -- sh`
	k.Flags().StringVarP(&sidecar, "sidecar", "S", "", "The SidecarSet container to exec into; for a hot-upgrade sidecar, the one of its two containers now working.")
	k.RunE = func(cmd *cobra.Command, args []string) error {
		args = qualifyOurs(args)
		if sidecar != "" && len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
			if cmd.Flags().Changed("container") {
				return fmt.Errorf("-c and -S both name the container: give one")
			}
			pod, err := o.execPod(cmd, f, args[0])
			if err != nil {
				return err
			}
			container := workingSidecar(pod, sidecar)
			if container != sidecar {
				fmt.Fprintf(cmd.ErrOrStderr(), "Enter working container %s of SidecarSet.\n", container)
			}
			if err := cmd.Flags().Set("container", container); err != nil {
				return err
			}
			args[0] = "pod/" + pod.Name
		}
		return runKubectl(func() { run(cmd, args) })
	}
	return k
}

// execPod is the pod exec runs in for the argument POD or TYPE/NAME.
func (o *Options) execPod(cmd *cobra.Command, f cmdutil.Factory, arg string) (*corev1.Pod, error) {
	s, err := o.session()
	if err != nil {
		return nil, err
	}
	typ, name, ok := strings.Cut(arg, "/")
	if !ok || typ == "pod" || typ == "pods" {
		if !ok {
			name = arg
		}
		pod := &corev1.Pod{}
		if err := s.c.Get(cmd.Context(), client.ObjectKey{Namespace: s.namespace, Name: name}, pod); err != nil {
			return nil, fmt.Errorf("get pod %q: %w", name, err)
		}
		return pod, nil
	}
	obj, err := f.NewBuilder().WithScheme(s.scheme, s.scheme.PrioritizedVersionsAllGroups()...).
		NamespaceParam(s.namespace).DefaultNamespace().ResourceNames("pods", arg).Do().Object()
	if err != nil {
		return nil, err
	}
	timeout, err := cmdutil.GetPodRunningTimeoutFlag(cmd)
	if err != nil {
		return nil, err
	}
	return polymorphichelpers.AttachablePodForObjectFn(f, obj, timeout)
}

// workingSidecar is the container of sidecar that runs now: for a hot-upgrade sidecar the one
// the pod's kruise.io/sidecarset-working-hotupgrade-container annotation names, else sidecar.
func workingSidecar(pod *corev1.Pod, sidecar string) string {
	working := map[string]string{}
	if raw := pod.Annotations[appsv1alpha1.SidecarSetWorkingHotUpgradeContainer]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &working); err != nil {
			return sidecar
		}
	}
	if c, ok := working[sidecar]; ok {
		return c
	}
	return sidecar
}
