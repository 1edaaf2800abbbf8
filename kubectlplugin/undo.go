package kubectlplugin

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pickRollback chooses the revision undo goes back to: toRevision, or with 0 the one before
// the latest. revs is sorted oldest first.
func pickRollback(revs []*appsv1.ControllerRevision, toRevision int64) (*appsv1.ControllerRevision, error) {
	if toRevision == 0 {
		if len(revs) <= 1 {
			return nil, fmt.Errorf("no last revision to roll back to")
		}
		return revs[len(revs)-2], nil
	}
	if r := findRevision(revs, toRevision); r != nil {
		return r, nil
	}
	return nil, fmt.Errorf("unable to find specified revision %d in history", toRevision)
}

func newUndoCommand(o *Options) *cobra.Command {
	var toRevision int64
	return workloadCommand{
		use:   "undo (TYPE NAME... | TYPE/NAME...) [--to-revision=N]",
		short: "Roll back to a previous revision: its pod template replaces the current one",
		example: `  kubectl kruise rollout undo cloneset/web
  kubectl kruise rollout undo asts/db --to-revision=2`,
		flags: func(fs *pflag.FlagSet) {
			fs.Int64Var(&toRevision, "to-revision", 0, "The revision to rollback to. Default to 0 (last revision).")
		},
		targets: checkRevision("to-revision", &toRevision, "the previous revision", "rollout history"),
		each: func(a action, t target) error {
			if err := refusePaused(a, t); err != nil {
				return err
			}
			var picked int64
			obj, changed, err := a.change(a.ctx, t, func(obj client.Object) error {
				revs, err := a.revisions(a.ctx, t, obj)
				if err != nil {
					return err
				}
				r, err := pickRollback(revs, toRevision)
				if err != nil {
					return err
				}
				tmpl, err := revisionTemplate(r)
				if err != nil {
					return err
				}
				picked = r.Revision
				if !apiequality.Semantic.DeepEqual(t.kind.template(obj), tmpl) {
					*t.kind.template(obj) = *tmpl
				}
				return nil
			})
			if err != nil {
				return err
			}
			op := "rolled back"
			if !changed {
				op = fmt.Sprintf("skipped rollback (current template already matches revision %d)", picked)
			}
			return a.print(op, obj)
		},
	}.command(o)
}

// refusePaused refuses to roll back a paused workload, in kubectl's words for a Deployment:
// the paused update would hide the rollback until resume.
func refusePaused(a action, t target) error {
	obj, err := a.get(a.ctx, t)
	if err != nil {
		return err
	}
	if t.kind.paused(obj) {
		return fmt.Errorf("you cannot rollback a paused %s; resume it first with 'kubectl kruise rollout resume' and try again", t.kind.noun)
	}
	return nil
}
