package kubectlplugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/cmd/rollout"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// restartedAtAnnotation is the template annotation kubectl rollout restart sets.
const restartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"

// errTimedOut is what rollout status reports when --timeout ends the wait, in kubectl's words.
var errTimedOut = errors.New("timed out waiting for the condition")

func newRolloutCommand(o *Options) *cobra.Command {
	return parentCommand("rollout", "Manage the rollout of a workload: the add-on's kinds, and Deployments, StatefulSets and DaemonSets through kubectl",
		"one of history, pause, restart, resume, status, undo",
		orKubectl(o, newStatusCommand(o), rollout.NewCmdRolloutStatus),
		orKubectl(o, newHistoryCommand(o), rollout.NewCmdRolloutHistory),
		orKubectl(o, newUndoCommand(o), func(f cmdutil.Factory, s genericiooptions.IOStreams) *cobra.Command {
			return rollout.NewCmdRolloutUndo("kubectl", f, s)
		}),
		orKubectl(o, newSwitchCommand(o, "pause", "paused", "Mark the workloads as paused: the update stops (not scaling)", true), rollout.NewCmdRolloutPause),
		orKubectl(o, newSwitchCommand(o, "resume", "resumed", "Resume paused workloads", false), rollout.NewCmdRolloutResume),
		orKubectl(o, newRestartCommand(o), rollout.NewCmdRolloutRestart))
}

func newStatusCommand(o *Options) *cobra.Command {
	var watch bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "status (TYPE NAME | TYPE/NAME)",
		Short: "Show the status of a rollout, waiting for it to finish unless --watch=false",
		Example: `  kubectl kruise rollout status cloneset/web
  kubectl kruise rollout status asts/db --timeout=5m`,
		RunE: func(cmd *cobra.Command, args []string) error {
			targets, err := parseTargets(args)
			if err != nil {
				return err
			}
			if len(targets) != 1 {
				return fmt.Errorf("rollout status takes exactly one resource, got %d", len(targets))
			}
			if timeout < 0 {
				return fmt.Errorf("invalid --timeout %s: must be 0 (wait for ever) or a positive duration such as 5m", timeout)
			}
			s, err := o.session()
			if err != nil {
				return err
			}
			return followRollout(cmd.Context(), s, targets[0], watch, timeout, o.pollInterval(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", true, "Watch the status of the rollout until it's done.")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "The length of time to wait before ending watch, zero means never. Any other values should contain a corresponding time unit (e.g. 1s, 2m, 3h).")
	return cmd
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Options) pollInterval() time.Duration {
	if o.PollInterval > 0 {
		return o.PollInterval
	}
	return time.Second
}

// followRollout prints each new state of the rollout until it is done, until the timeout
// (an error), or once with watch off. The timeout bounds the wait between reads, never a read:
// client-go refuses a request that might pass its context's deadline with an error of its own,
// which would then stand in for kubectl's timeout error.
func followRollout(ctx context.Context, s *session, t target, watch bool, timeout, interval time.Duration, out io.Writer) error {
	pollCtx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		pollCtx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	last := ""
	err := wait.PollUntilContextCancel(pollCtx, interval, true, func(context.Context) (bool, error) {
		obj, err := s.get(ctx, t)
		if err != nil {
			return false, err
		}
		st := t.kind.status(obj)
		if st.err != nil {
			return false, st.err
		}
		if st.message != last {
			fmt.Fprint(out, st.message)
			last = st.message
		}
		return st.done || !watch, nil
	})
	if err != nil && wait.Interrupted(err) && ctx.Err() == nil {
		return errTimedOut
	}
	return err
}

// newSwitchCommand builds pause (paused true) and resume (paused false). As with kubectl, a
// workload already in that state is an error ("is already paused", "is not paused"), reported
// after the other workloads are done.
func newSwitchCommand(o *Options, use, done, short string, paused bool) *cobra.Command {
	already := "is not paused"
	if paused {
		already = "is already paused"
	}
	return workloadCommand{
		use:   use + " (TYPE NAME... | TYPE/NAME...)",
		short: short,
		each: func(a action, t target) error {
			obj, changed, err := a.change(a.ctx, t, func(obj client.Object) error {
				t.kind.setPaused(obj, paused)
				return nil
			})
			if err != nil {
				return err
			}
			if !changed {
				return fmt.Errorf("%s.%s %q %s", t.kind.resource, t.kind.gvk.Group, t.name, already)
			}
			return a.print(done, obj)
		},
	}.command(o)
}

func newRestartCommand(o *Options) *cobra.Command {
	return workloadCommand{
		use:   "restart (TYPE NAME... | TYPE/NAME...)",
		short: "Restart the pods of workloads by stamping their template with the time",
		each: func(a action, t target) error {
			obj, changed, err := a.change(a.ctx, t, func(obj client.Object) error {
				if t.kind.paused(obj) {
					return fmt.Errorf("can't restart paused %s (run rollout resume first)", t.kind.noun)
				}
				tmpl := t.kind.template(obj)
				if tmpl.Annotations == nil {
					tmpl.Annotations = map[string]string{}
				}
				tmpl.Annotations[restartedAtAnnotation] = o.now().Format(time.RFC3339)
				return nil
			})
			if err != nil {
				return err
			}
			if !changed {
				// The stamp has a resolution of one second, as kubectl's does.
				return fmt.Errorf("failed to create patch for %s: if restart has already been triggered within the past second, please wait before attempting to trigger another", t.name)
			}
			return a.print("restarted", obj)
		},
	}.command(o)
}

// change reads the workload, applies f and writes the difference as a merge patch (custom
// resources take no strategic merge patch). It reports whether anything changed; an unchanged
// object is not written.
func (s *session) change(ctx context.Context, t target, f func(client.Object) error) (client.Object, bool, error) {
	obj, err := s.get(ctx, t)
	if err != nil {
		return nil, false, err
	}
	before := obj.DeepCopyObject().(client.Object)
	if err := f(obj); err != nil {
		return nil, false, fmt.Errorf("%s/%s: %w", t.kind.qualified(), t.name, err)
	}
	if apiequality.Semantic.DeepEqual(before, obj) {
		return obj, false, nil
	}
	if err := s.c.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		return nil, false, fmt.Errorf("patch %s/%s: %w", t.kind.qualified(), t.name, err)
	}
	return obj, true, nil
}
