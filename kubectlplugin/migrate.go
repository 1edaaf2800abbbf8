package kubectlplugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// migrateOptions are the flags of migrate; their names are those OpenKruise users already type.
type migrateOptions struct {
	from, srcName, dstName string
	create, copyReplicas   bool
	replicas, maxSurge     int32
	timeoutSeconds         int32
}

func newMigrateCommand(o *Options) *cobra.Command {
	m := &migrateOptions{}
	cmd := &cobra.Command{
		Use:   "migrate cloneset --from=deployment --src-name=NAME --dst-name=NAME [--create [--copy] | --replicas=N --max-surge=N --timeout-seconds=N]",
		Short: "Create a CloneSet from a Deployment, or move a Deployment's replicas to a CloneSet",
		Long: `Migrate moves a Deployment's workload to a CloneSet.

With --create it creates the CloneSet --dst-name from the Deployment --src-name: the same
selector, template, labels and strategy, with 0 replicas (or the Deployment's with --copy).

Without --create it moves --replicas replicas (default: all) from the Deployment to the
existing CloneSet: it scales the CloneSet out by at most --max-surge at a time and the
Deployment in by as many once the CloneSet's new pods are available, printing each step.`,
		Example: `  # Create a CloneSet with no replicas from the Deployment web
  kubectl kruise migrate cloneset --from=deployment --src-name=web --dst-name=web --create

  # Move every replica of the Deployment web to the CloneSet web, two at a time
  kubectl kruise migrate cloneset --from=deployment --src-name=web --dst-name=web --max-surge=2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := m.validate(args[0]); err != nil {
				return err
			}
			s, err := o.session()
			if err != nil {
				return err
			}
			if m.create {
				return s.createCloneSetFrom(cmd.Context(), m, cmd.OutOrStdout())
			}
			return s.migrate(cmd.Context(), m, o.pollInterval(), cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&m.from, "from", "", "Type of the source workload: deployment. Required.")
	fs.StringVar(&m.srcName, "src-name", "", "Name of the source workload. Required.")
	fs.StringVar(&m.dstName, "dst-name", "", "Name of the destination workload. Required.")
	fs.BoolVar(&m.create, "create", false, "Create the destination workload, with 0 replicas, from the source workload.")
	fs.BoolVar(&m.copyReplicas, "copy", false, "With --create, give the destination the source's replicas.")
	fs.Int32Var(&m.replicas, "replicas", -1, "The number of replicas to move; -1 moves all of the source's.")
	fs.Int32Var(&m.maxSurge, "max-surge", 1, "The most replicas the destination runs beyond those the source gave up, during the move.")
	fs.Int32Var(&m.timeoutSeconds, "timeout-seconds", -1, "Seconds the move may take before it fails; -1 means no limit.")
	return cmd
}

func (m *migrateOptions) validate(to string) error {
	var errs []error
	if k, err := lookupKind(to); err != nil || k.gvk.Kind != "CloneSet" {
		errs = append(errs, fmt.Errorf("destination type %q is not supported: migrate creates or fills a cloneset", to))
	}
	if !nativeNames[strings.ToLower(m.from)] || !strings.HasPrefix(strings.ToLower(m.from), "deploy") {
		errs = append(errs, fmt.Errorf("--from %q is not supported: use --from=deployment", m.from))
	}
	if m.srcName == "" || m.dstName == "" {
		errs = append(errs, fmt.Errorf("--src-name and --dst-name are required: the Deployment and the CloneSet to migrate between"))
	}
	if m.copyReplicas && !m.create {
		errs = append(errs, fmt.Errorf("--copy applies only with --create"))
	}
	if m.replicas == 0 || m.replicas < -1 {
		errs = append(errs, fmt.Errorf("invalid --replicas %d: must be -1 (all) or a positive number", m.replicas))
	}
	if m.maxSurge < 1 {
		errs = append(errs, fmt.Errorf("invalid --max-surge %d: must be 1 or more", m.maxSurge))
	}
	return errors.Join(errs...)
}

// cloneSetFrom is the CloneSet that takes over d: its selector, template, labels, annotations
// and rolling update bounds, with replicas 0 unless copied.
func cloneSetFrom(d *appsv1.Deployment, name string, copyReplicas bool) *appsv1alpha1.CloneSet {
	annotations := map[string]string{}
	for k, v := range d.Annotations {
		if k != "deployment.kubernetes.io/revision" && k != "kubectl.kubernetes.io/last-applied-configuration" {
			annotations[k] = v
		}
	}
	cs := &appsv1alpha1.CloneSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.Namespace, Labels: d.Labels, Annotations: annotations},
		Spec: appsv1alpha1.CloneSetSpec{
			Replicas:             ptr.To[int32](0),
			Selector:             d.Spec.Selector,
			Template:             d.Spec.Template,
			RevisionHistoryLimit: d.Spec.RevisionHistoryLimit,
			MinReadySeconds:      d.Spec.MinReadySeconds,
			UpdateStrategy: appsv1alpha1.CloneSetUpdateStrategy{
				Type:   appsv1alpha1.RecreateCloneSetUpdateStrategyType,
				Paused: d.Spec.Paused,
			},
		},
	}
	if copyReplicas {
		cs.Spec.Replicas = d.Spec.Replicas
	}
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		cs.Spec.UpdateStrategy.MaxUnavailable, cs.Spec.UpdateStrategy.MaxSurge = ru.MaxUnavailable, ru.MaxSurge
	}
	return cs
}

func (s *session) createCloneSetFrom(ctx context.Context, m *migrateOptions, out io.Writer) error {
	d := &appsv1.Deployment{}
	if err := s.c.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: m.srcName}, d); err != nil {
		return fmt.Errorf("--src-name %s: %w", m.srcName, err)
	}
	if err := s.c.Create(ctx, cloneSetFrom(d, m.dstName, m.copyReplicas)); apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("--dst-name %s: cloneset %s/%s already exists; leave out --create to move replicas into it", m.dstName, s.namespace, m.dstName)
	} else if err != nil {
		return fmt.Errorf("create cloneset %s: %w", m.dstName, err)
	}
	fmt.Fprintf(out, "Successfully created from Deployment/%s to CloneSet/%s\n", m.srcName, m.dstName)
	return nil
}

// migration is the progress of a move: the replicas to move, how many the source gave up and
// how many the destination took on.
type migration struct {
	replicas, maxSurge int32
	srcMoved, dstMoved int32
}

// next decides one step of the move: how far to scale the destination out, then, once its
// pods are available, the source in. Both workloads must have observed their last change.
func (g migration) next(srcReplicas int32, dstAvailable bool) (scaleOut, scaleIn int32) {
	if g.dstMoved < g.replicas {
		if n := min(g.maxSurge-(g.dstMoved-g.srcMoved), g.replicas-g.dstMoved); n > 0 {
			return n, 0
		}
	}
	if g.srcMoved < g.replicas && dstAvailable {
		if n := min(srcReplicas, g.replicas-g.srcMoved, g.dstMoved-g.srcMoved); n > 0 {
			return 0, n
		}
	}
	return 0, 0
}

func (g migration) done() bool { return g.srcMoved == g.replicas && g.dstMoved == g.replicas }

func (s *session) migrate(ctx context.Context, m *migrateOptions, interval time.Duration, out io.Writer) error {
	d, cs := &appsv1.Deployment{}, &appsv1alpha1.CloneSet{}
	read := func(ctx context.Context) error {
		if err := s.c.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: m.srcName}, d); err != nil {
			return fmt.Errorf("--src-name %s: %w", m.srcName, err)
		}
		if err := s.c.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: m.dstName}, cs); err != nil {
			return fmt.Errorf("--dst-name %s: %w; create it first with --create", m.dstName, err)
		}
		return nil
	}
	if err := read(ctx); err != nil {
		return err
	}
	g := migration{replicas: m.replicas, maxSurge: m.maxSurge}
	if g.replicas < 0 {
		g.replicas = ptr.Deref(d.Spec.Replicas, 1)
	}
	pollCtx := ctx
	if m.timeoutSeconds > 0 {
		var cancel context.CancelFunc
		pollCtx, cancel = context.WithTimeout(ctx, time.Duration(m.timeoutSeconds)*time.Second)
		defer cancel()
	}
	err := wait.PollUntilContextCancel(pollCtx, interval, true, func(context.Context) (bool, error) {
		if g.done() {
			return true, nil
		}
		if err := read(ctx); err != nil {
			return false, err
		}
		if d.Generation != d.Status.ObservedGeneration || cs.Generation != cs.Status.ObservedGeneration {
			return false, nil
		}
		csReplicas := ptr.Deref(cs.Spec.Replicas, 0)
		out1, in := g.next(ptr.Deref(d.Spec.Replicas, 0), csReplicas == cs.Status.AvailableReplicas)
		switch {
		case out1 > 0:
			if err := s.scaleTo(ctx, cs, csReplicas+out1); err != nil {
				return false, err
			}
			g.dstMoved += out1
		case in > 0:
			if err := s.scaleTo(ctx, d, ptr.Deref(d.Spec.Replicas, 0)-in); err != nil {
				return false, err
			}
			g.srcMoved += in
		default:
			return false, nil
		}
		fmt.Fprintf(out, "Migration progress: Deployment/%s scale in %d, CloneSet/%s scale out %d\n", m.srcName, g.srcMoved, m.dstName, g.dstMoved)
		return false, nil
	})
	if err != nil {
		if wait.Interrupted(err) && ctx.Err() == nil {
			return fmt.Errorf("failed to migrate: --timeout-seconds %d passed with %d of %d replicas moved", m.timeoutSeconds, g.srcMoved, g.replicas)
		}
		return fmt.Errorf("failed to migrate: %w", err)
	}
	fmt.Fprintf(out, "Successfully migrated %d replicas from Deployment/%s to CloneSet/%s\n", g.dstMoved, m.srcName, m.dstName)
	return nil
}

// scaleTo writes replicas n to a Deployment or CloneSet as a merge patch.
func (s *session) scaleTo(ctx context.Context, obj client.Object, n int32) error {
	before := obj.DeepCopyObject().(client.Object)
	switch o := obj.(type) {
	case *appsv1.Deployment:
		o.Spec.Replicas = &n
	case *appsv1alpha1.CloneSet:
		o.Spec.Replicas = &n
	}
	if err := s.c.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("scale %s to %d: %w", obj.GetName(), n, err)
	}
	return nil
}
