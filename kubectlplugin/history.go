package kubectlplugin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/kubectl/pkg/describe"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// changeCauseAnnotation is the annotation kubectl reads the CHANGE-CAUSE column from.
const changeCauseAnnotation = "kubernetes.io/change-cause"

// revisions lists the ControllerRevisions the workload owns, oldest first.
func (s *session) revisions(ctx context.Context, t target, obj client.Object) ([]*appsv1.ControllerRevision, error) {
	var list appsv1.ControllerRevisionList
	opts := []client.ListOption{client.InNamespace(obj.GetNamespace())}
	if sel := t.kind.selector(obj); sel != nil {
		opts = append(opts, client.MatchingLabels(sel))
	}
	if err := s.c.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("list revisions of %s/%s: %w", t.kind.qualified(), t.name, err)
	}
	var out []*appsv1.ControllerRevision
	for i := range list.Items {
		for _, ref := range list.Items[i].OwnerReferences {
			if ref.UID == obj.GetUID() {
				out = append(out, &list.Items[i])
				break
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Revision < out[j].Revision })
	return out, nil
}

// getWithRevisions reads the workload and the revisions it owns.
func (s *session) getWithRevisions(ctx context.Context, t target) (client.Object, []*appsv1.ControllerRevision, error) {
	obj, err := s.get(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	revs, err := s.revisions(ctx, t, obj)
	if err != nil {
		return nil, nil, err
	}
	return obj, revs, nil
}

// revisionTemplate decodes the pod template a revision holds (its data is a patch of
// spec.template).
func revisionTemplate(r *appsv1.ControllerRevision) (*corev1.PodTemplateSpec, error) {
	var data struct {
		Spec struct {
			Template *corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(r.Data.Raw, &data); err != nil {
		return nil, fmt.Errorf("decode revision %s: %w", r.Name, err)
	}
	if data.Spec.Template == nil {
		return nil, fmt.Errorf("revision %s holds no spec.template", r.Name)
	}
	return data.Spec.Template, nil
}

// historyTable is the REVISION / CHANGE-CAUSE table kubectl prints.
func historyTable(revs []*appsv1.ControllerRevision) string {
	if len(revs) == 0 {
		return "No rollout history found."
	}
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 0, 8, 2, ' ', 0)
	fmt.Fprintf(w, "REVISION\tCHANGE-CAUSE\n")
	for _, r := range revs {
		cause := r.Annotations[changeCauseAnnotation]
		if cause == "" {
			cause = "<none>"
		}
		fmt.Fprintf(w, "%d\t%s\n", r.Revision, cause)
	}
	_ = w.Flush() // writes to a buffer cannot fail
	return buf.String()
}

// templateDetail is a revision's pod template as kubectl describe prints one.
func templateDetail(t *corev1.PodTemplateSpec) string {
	var buf bytes.Buffer
	describe.DescribePodTemplate(t, describe.NewPrefixWriter(&buf))
	return buf.String()
}

func findRevision(revs []*appsv1.ControllerRevision, n int64) *appsv1.ControllerRevision {
	for _, r := range revs {
		if r.Revision == n {
			return r
		}
	}
	return nil
}

func newHistoryCommand(o *Options) *cobra.Command {
	var revision int64
	return workloadCommand{
		use:   "history (TYPE NAME... | TYPE/NAME...)",
		short: "View the rollout history: the workload's revisions, or one revision's template with --revision",
		flags: func(fs *pflag.FlagSet) {
			fs.Int64Var(&revision, "revision", 0, "See the details, including podTemplate of the revision specified")
		},
		targets: checkRevision("revision", &revision, "all revisions", "the history"),
		each:    func(a action, t target) error { return a.history(a.ctx, a.pf, t, revision, a.out) },
	}.command(o)
}

func (s *session) history(ctx context.Context, flags *genericclioptions.PrintFlags, t target, revision int64, out io.Writer) error {
	obj, revs, err := s.getWithRevisions(ctx, t)
	if err != nil {
		return err
	}
	if revision > 0 {
		r := findRevision(revs, revision)
		if r == nil {
			return fmt.Errorf("unable to find the specified revision %d of %s/%s", revision, t.kind.qualified(), t.name)
		}
		if wantsObjects(flags) {
			return s.printObject(flags, "", r, out)
		}
		tmpl, err := revisionTemplate(r)
		if err != nil {
			return err
		}
		return s.printObject(flags, fmt.Sprintf("with revision #%d\n%s", revision, templateDetail(tmpl)), obj, out)
	}
	if wantsObjects(flags) {
		for _, r := range revs {
			if err := s.printObject(flags, "", r, out); err != nil {
				return err
			}
		}
		return nil
	}
	return s.printObject(flags, "\n"+historyTable(revs), obj, out)
}

// wantsObjects tells whether -o asks for the objects themselves (json, yaml, jsonpath...)
// rather than kubectl's text.
func wantsObjects(pf *genericclioptions.PrintFlags) bool {
	return pf.OutputFormat != nil && *pf.OutputFormat != "" && *pf.OutputFormat != "name"
}
