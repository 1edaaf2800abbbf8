package kubectlplugin

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/kubectl/pkg/cmd/create"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// manualAnnotation marks a job made by hand from a cron template, as kubectl marks one made
// from a CronJob.
const manualAnnotation = "cronjob.kubernetes.io/instantiate"

// acjNames are what users may type for an AdvancedCronJob in --from.
var acjNames = sets.New("acj", "advancedcronjob", "advancedcronjobs", "advancedcronjob.apps.kruise.io", "advancedcronjobs.apps.kruise.io")

func newCreateCommand(o *Options) *cobra.Command {
	return parentCommand("create", "Create a Job or BroadcastJob from an AdvancedCronJob, a BroadcastJob, or a ContainerRecreateRequest",
		"one of broadcastjob, containerrecreaterequest, job",
		newCreateJobCommand(o), newCreateBroadcastJobCommand(o), newCreateCRRCommand(o))
}

// creation is what a create command has at hand once its flags are read.
type creation struct {
	cmd  *cobra.Command
	s    *session
	name string
	// dryRun is kubectl's client dry run: print what would be created, create nothing.
	dryRun bool
	output string
}

// newCreation reads the flags create commands share (kubectl's -o and --dry-run).
func (o *Options) newCreation(cmd *cobra.Command, name string) (*creation, error) {
	dry, err := cmdutil.GetDryRunStrategy(cmd)
	if err != nil {
		return nil, err
	}
	if dry == cmdutil.DryRunServer {
		return nil, fmt.Errorf("--dry-run=server is not supported here: use --dry-run=client or none")
	}
	output, err := cmd.Flags().GetString("output")
	if err != nil {
		return nil, err
	}
	s, err := o.session()
	if err != nil {
		return nil, err
	}
	return &creation{cmd: cmd, s: s, name: name, dryRun: dry == cmdutil.DryRunClient, output: output}, nil
}

// create creates obj in the session's namespace (unless a dry run) and prints it as kubectl
// prints what it created.
func (c *creation) create(obj client.Object) error {
	obj.SetNamespace(c.s.namespace)
	op := "created"
	if c.dryRun {
		op = "created (dry run)"
	} else if err := c.s.c.Create(c.cmd.Context(), obj); err != nil {
		return fmt.Errorf("create %q: %w", obj.GetName(), err)
	}
	pf := newPrintFlags(op)
	pf.OutputFormat = &c.output
	return c.s.printObject(pf, op, obj, c.cmd.OutOrStdout())
}

// advancedCronJob reads the AdvancedCronJob that --from names, or returns nil when it names
// something else.
func (c *creation) advancedCronJob(from string) (*appsv1alpha1.AdvancedCronJob, error) {
	typ, name, ok := strings.Cut(from, "/")
	if !ok || !acjNames.Has(strings.ToLower(typ)) {
		return nil, nil
	}
	acj := &appsv1alpha1.AdvancedCronJob{}
	if err := c.s.c.Get(c.cmd.Context(), client.ObjectKey{Namespace: c.s.namespace, Name: name}, acj); err != nil {
		return nil, fmt.Errorf("--from %s: %w", from, err)
	}
	return acj, nil
}

// manualMeta is the metadata of a job made by hand from acj's template: the template's labels
// and annotations, the manual mark, and acj as its controller, as kubectl does for a CronJob.
func manualMeta(name string, acj *appsv1alpha1.AdvancedCronJob, tmpl metav1.ObjectMeta) metav1.ObjectMeta {
	annotations := map[string]string{manualAnnotation: "manual"}
	for k, v := range tmpl.Annotations {
		annotations[k] = v
	}
	return metav1.ObjectMeta{
		Name: name, Labels: tmpl.Labels, Annotations: annotations,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "AdvancedCronJob",
			Name: acj.Name, UID: acj.UID, Controller: ptr.To(true),
		}},
	}
}

// newCreateJobCommand is kubectl's create job, which also takes --from=acj/NAME: a Job from an
// AdvancedCronJob's jobTemplate.
func newCreateJobCommand(o *Options) *cobra.Command {
	k := create.NewCmdCreateJob(cmdutil.NewFactory(cmdutil.NewMatchVersionFlags(o.ConfigFlags)), o.Streams)
	run := k.Run
	k.Run = nil
	k.Use = "job NAME (--image=IMAGE [-- COMMAND [args...]] | --from=cronjob/NAME | --from=acj/NAME)"
	k.Example = `  # Create a job from the template of the AdvancedCronJob named nightly
  kubectl kruise create job nightly-manual --from=acj/nightly

  # Create a job from a CronJob or an image, as kubectl does
  kubectl kruise create job test-job --from=cronjob/a-cronjob
  kubectl kruise create job my-job --image=busybox -- date`
	k.Flag("from").Usage = "The name of the resource to create a Job from: a cronjob, or an AdvancedCronJob (acj/NAME) with a jobTemplate."
	k.RunE = func(cmd *cobra.Command, args []string) error {
		from, _ := cmd.Flags().GetString("from")
		typ, _, _ := strings.Cut(from, "/")
		if !acjNames.Has(strings.ToLower(typ)) {
			return runKubectl(func() { run(cmd, args) })
		}
		if len(args) != 1 {
			return fmt.Errorf("exactly one NAME is required with --from=%s, and no command: the job runs the template's", from)
		}
		if image, _ := cmd.Flags().GetString("image"); image != "" {
			return fmt.Errorf("either --image or --from must be specified")
		}
		c, err := o.newCreation(cmd, args[0])
		if err != nil {
			return err
		}
		acj, err := c.advancedCronJob(from)
		if err != nil {
			return err
		}
		t := acj.Spec.Template.JobTemplate
		if t == nil {
			return fmt.Errorf("--from %s: the AdvancedCronJob has no spec.template.jobTemplate; for a broadcastJobTemplate use create broadcastjob", from)
		}
		job := &batchv1.Job{ObjectMeta: manualMeta(c.name, acj, t.ObjectMeta), Spec: *t.Spec.DeepCopy()}
		return c.create(job)
	}
	return k
}

// createFlags binds the flags a create command of the plugin's own takes.
func createFlags(cmd *cobra.Command) {
	newPrintFlags("created").AddFlags(cmd)
	cmdutil.AddDryRunFlag(cmd)
}

func newCreateBroadcastJobCommand(o *Options) *cobra.Command {
	var image, from string
	cmd := &cobra.Command{
		Use:     "broadcastjob NAME (--image=IMAGE [-- COMMAND [args...]] | --from=acj/NAME)",
		Aliases: []string{"broadcastJob", "bcj"},
		Short:   "Create a BroadcastJob that runs a pod on each node, from an image or an AdvancedCronJob's template",
		Example: `  # Create a BroadcastJob that runs date on every node
  kubectl kruise create broadcastjob my-bcj --image=busybox -- date

  # Create a BroadcastJob from the template of the AdvancedCronJob named nightly
  kubectl kruise create broadcastjob nightly-manual --from=acj/nightly`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("NAME is required")
			}
			if (image == "") == (from == "") {
				return fmt.Errorf("either --image or --from must be specified")
			}
			if from != "" && len(args) > 1 {
				return fmt.Errorf("cannot specify --from and command")
			}
			c, err := o.newCreation(cmd, args[0])
			if err != nil {
				return err
			}
			if image != "" {
				return c.create(&appsv1alpha1.BroadcastJob{
					ObjectMeta: metav1.ObjectMeta{Name: c.name},
					Spec: appsv1alpha1.BroadcastJobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						Containers:    []corev1.Container{{Name: c.name, Image: image, Command: args[1:]}},
						RestartPolicy: corev1.RestartPolicyNever,
					}}},
				})
			}
			acj, err := c.advancedCronJob(from)
			if err != nil {
				return err
			}
			if acj == nil {
				return fmt.Errorf("--from %s: a BroadcastJob is made from an AdvancedCronJob: --from=acj/NAME", from)
			}
			t := acj.Spec.Template.BroadcastJobTemplate
			if t == nil {
				return fmt.Errorf("--from %s: the AdvancedCronJob has no spec.template.broadcastJobTemplate; for a jobTemplate use create job", from)
			}
			return c.create(&appsv1alpha1.BroadcastJob{ObjectMeta: manualMeta(c.name, acj, t.ObjectMeta), Spec: *t.Spec.DeepCopy()})
		},
	}
	cmd.Flags().StringVar(&image, "image", "", "Image name to run.")
	cmd.Flags().StringVar(&from, "from", "", "The AdvancedCronJob to create a BroadcastJob from (acj/NAME), which must have a broadcastJobTemplate.")
	createFlags(cmd)
	return cmd
}

func newCreateCRRCommand(o *Options) *cobra.Command {
	var pod string
	var containers []string
	var unready int64
	var minStarted int32
	cmd := &cobra.Command{
		Use:     "containerrecreaterequest NAME --pod=POD [--containers=NAME,...]",
		Aliases: []string{"ContainerRecreateRequest", "crr"},
		Short:   "Create a ContainerRecreateRequest that restarts containers of a pod in place",
		Example: `  # Recreate every container of pod web-0
  kubectl kruise create containerrecreaterequest my-crr --pod=web-0

  # Recreate the container main of pod web-0, marking the pod unready 5 seconds before
  kubectl kruise create crr my-crr --pod=web-0 --containers=main --unreadyGracePeriodSeconds=5`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if pod == "" {
				return fmt.Errorf("the --pod=POD flag is required: name the pod whose containers to recreate")
			}
			c, err := o.newCreation(cmd, args[0])
			if err != nil {
				return err
			}
			p := &corev1.Pod{}
			if err := c.s.c.Get(cmd.Context(), client.ObjectKey{Namespace: c.s.namespace, Name: pod}, p); err != nil {
				return fmt.Errorf("--pod %s: %w", pod, err)
			}
			chosen, err := crrContainers(p, containers)
			if err != nil {
				return err
			}
			return c.create(&appsv1alpha1.ContainerRecreateRequest{
				ObjectMeta: metav1.ObjectMeta{Name: c.name},
				Spec: appsv1alpha1.ContainerRecreateRequestSpec{
					PodName:    pod,
					Containers: chosen,
					Strategy: &appsv1alpha1.ContainerRecreateRequestStrategy{
						FailurePolicy:             appsv1alpha1.ContainerRecreateRequestFailurePolicyFail,
						UnreadyGracePeriodSeconds: &unready,
						MinStartedSeconds:         minStarted,
					},
					ActiveDeadlineSeconds:   ptr.To[int64](300),
					TTLSecondsAfterFinished: ptr.To[int32](1800),
				},
			})
		},
	}
	cmd.Flags().StringVarP(&pod, "pod", "p", "", "The name of the pod whose containers to recreate. Required.")
	cmd.Flags().StringSliceVar(&containers, "containers", nil, "The containers to recreate, comma separated. Default: every container of the pod.")
	cmd.Flags().Int64VarP(&unready, "unreadyGracePeriodSeconds", "u", 3, "Seconds the pod is marked not ready before a container's preStop hook runs and it stops.")
	cmd.Flags().Int32VarP(&minStarted, "minStartedSeconds", "m", 3, "Seconds a recreated container must stay started and ready for the request to succeed.")
	createFlags(cmd)
	return cmd
}

// crrContainers are the pod's containers a request recreates: the named ones, each of which
// must exist, or all of them. The webhook fills in their preStop hooks and ports.
func crrContainers(pod *corev1.Pod, names []string) ([]appsv1alpha1.ContainerRecreateRequestContainer, error) {
	have := sets.New[string]()
	var out []appsv1alpha1.ContainerRecreateRequestContainer
	for _, c := range pod.Spec.Containers {
		have.Insert(c.Name)
		if len(names) == 0 {
			out = append(out, appsv1alpha1.ContainerRecreateRequestContainer{Name: c.Name})
		}
	}
	for _, n := range names {
		if !have.Has(n) {
			return nil, fmt.Errorf("--containers %s: pod %s has no such container; it has %s", n, pod.Name, strings.Join(sets.List(have), ", "))
		}
		out = append(out, appsv1alpha1.ContainerRecreateRequestContainer{Name: n})
	}
	return out, nil
}
