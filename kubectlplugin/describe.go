package kubectlplugin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/kubectl/pkg/describe"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
)

func newDescribeCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "describe (TYPE NAME... | TYPE/NAME...)",
		Short:   "Show a workload's rollout state: replicas, revisions, partition, paused, conditions and events",
		Example: `  kubectl kruise describe cloneset web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			first := true
			return o.forEach(args, func(s *session, t target) error {
				if !first {
					fmt.Fprintln(cmd.OutOrStdout())
				}
				first = false
				return s.describe(cmd.Context(), t, cmd.OutOrStdout())
			})
		},
	}
	return cmd
}

// describeRow is one "Field:  value" line of a description.
type describeRow struct{ key, value string }

// rolloutRows is the kind's rollout state, in the order describe prints it.
func rolloutRows(k *kind, obj client.Object) []describeRow {
	switch o := obj.(type) {
	case *appsv1alpha1.CloneSet:
		st := o.Status
		return append([]describeRow{
			{"Replicas", fmt.Sprintf("%d desired | %d updated | %d updated ready | %d total | %d ready | %d available",
				deref(o.Spec.Replicas, 1), st.UpdatedReplicas, st.UpdatedReadyReplicas, st.Replicas, st.ReadyReplicas, st.AvailableReplicas)},
			{"Update Strategy", string(o.Spec.UpdateStrategy.Type)},
		}, revisionRows(k, obj, st.ObservedGeneration, &st.CurrentRevision, st.UpdateRevision)...)
	case *appsv1beta1.StatefulSet:
		st := o.Status
		policy := ""
		if ru := o.Spec.UpdateStrategy.RollingUpdate; ru != nil {
			policy = string(ru.PodUpdatePolicy)
		}
		return append([]describeRow{
			{"Replicas", fmt.Sprintf("%d desired | %d updated | %d updated ready | %d current | %d total | %d ready | %d available",
				deref(o.Spec.Replicas, 1), st.UpdatedReplicas, st.UpdatedReadyReplicas, st.CurrentReplicas, st.Replicas, st.ReadyReplicas, st.AvailableReplicas)},
			{"Update Strategy", strings.TrimSpace(string(o.Spec.UpdateStrategy.Type) + " " + policy)},
		}, revisionRows(k, obj, st.ObservedGeneration, &st.CurrentRevision, st.UpdateRevision)...)
	case *appsv1alpha1.DaemonSet:
		st := o.Status
		return append([]describeRow{
			{"Desired Number of Nodes Scheduled", fmt.Sprint(st.DesiredNumberScheduled)},
			{"Current Number of Nodes Scheduled", fmt.Sprint(st.CurrentNumberScheduled)},
			{"Number of Nodes Scheduled with Up-to-date Pods", fmt.Sprint(st.UpdatedNumberScheduled)},
			{"Number of Nodes Scheduled with Available Pods", fmt.Sprint(st.NumberAvailable)},
			{"Number of Nodes Misscheduled", fmt.Sprint(st.NumberMisscheduled)},
			{"Pods Status", fmt.Sprintf("%d Ready / %d Unavailable", st.NumberReady, st.NumberUnavailable)},
			{"Update Strategy", string(o.Spec.UpdateStrategy.Type)},
		}, revisionRows(k, obj, st.ObservedGeneration, nil, st.DaemonSetHash)...)
	}
	return nil
}

// revisionRows are the rows every kind's rollout state ends with: partition, paused, the
// current revision (when the kind records one), the update revision and the observed
// generation.
func revisionRows(k *kind, obj client.Object, observed int64, current *string, update string) []describeRow {
	partition := k.partition(obj)
	if partition == "" {
		partition = "<none>"
	}
	rows := []describeRow{{"Partition", partition}, {"Paused", fmt.Sprint(k.paused(obj))}}
	if current != nil {
		rows = append(rows, describeRow{"Current Revision", orNone(*current)})
	}
	return append(rows,
		describeRow{"Update Revision", orNone(update)},
		describeRow{"Observed Generation", fmt.Sprintf("%d (generation %d)", observed, obj.GetGeneration())})
}

// conditionRows are the workload's conditions as type, status, reason and message.
func conditionRows(obj client.Object) [][4]string {
	var out [][4]string
	switch o := obj.(type) {
	case *appsv1alpha1.CloneSet:
		for _, c := range o.Status.Conditions {
			out = append(out, [4]string{string(c.Type), string(c.Status), c.Reason, c.Message})
		}
	case *appsv1beta1.StatefulSet:
		for _, c := range o.Status.Conditions {
			out = append(out, [4]string{string(c.Type), string(c.Status), c.Reason, c.Message})
		}
	case *appsv1alpha1.DaemonSet:
		for _, c := range o.Status.Conditions {
			out = append(out, [4]string{string(c.Type), string(c.Status), c.Reason, c.Message})
		}
	}
	return out
}

func (s *session) describe(ctx context.Context, t target, out io.Writer) error {
	obj, revs, err := s.getWithRevisions(ctx, t)
	if err != nil {
		return err
	}
	var events corev1.EventList
	if err := s.c.List(ctx, &events, client.InNamespace(obj.GetNamespace()),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("involvedObject.uid", string(obj.GetUID()))}); err != nil {
		return fmt.Errorf("list events of %s/%s: %w", t.kind.qualified(), t.name, err)
	}
	sort.SliceStable(events.Items, func(i, j int) bool { return eventTime(events.Items[i]).Before(eventTime(events.Items[j])) })
	fmt.Fprint(out, description(t.kind, obj, revs, &events))
	return nil
}

func eventTime(e corev1.Event) time.Time {
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp.Time
	}
	return e.EventTime.Time
}

// description is the text describe prints for one workload.
func description(k *kind, obj client.Object, revs []*appsv1.ControllerRevision, events *corev1.EventList) string {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 8, 2, ' ', 0)
	w := describe.NewPrefixWriter(tw)
	w.Write(describe.LEVEL_0, "Name:\t%s\n", obj.GetName())
	w.Write(describe.LEVEL_0, "Namespace:\t%s\n", obj.GetNamespace())
	w.Write(describe.LEVEL_0, "Kind:\t%s\n", k.qualified())
	w.Write(describe.LEVEL_0, "CreationTimestamp:\t%s\n", obj.GetCreationTimestamp().Time.Format(time.RFC1123Z))
	w.Write(describe.LEVEL_0, "Labels:\t%s\n", labelsText(obj.GetLabels()))
	if sel := k.selector(obj); sel != nil {
		w.Write(describe.LEVEL_0, "Selector:\t%s\n", labelsText(sel))
	}
	for _, r := range rolloutRows(k, obj) {
		w.Write(describe.LEVEL_0, "%s:\t%s\n", r.key, r.value)
	}
	if len(revs) == 0 {
		w.Write(describe.LEVEL_0, "Revisions:\t<none>\n")
	} else {
		w.Write(describe.LEVEL_0, "Revisions:\n  Revision\tName\n  --------\t----\n")
		for _, r := range revs {
			w.Write(describe.LEVEL_1, "%d\t%s\n", r.Revision, r.Name)
		}
	}
	describe.DescribePodTemplate(k.template(obj), w)
	if conds := conditionRows(obj); len(conds) > 0 {
		w.Write(describe.LEVEL_0, "Conditions:\n  Type\tStatus\tReason\tMessage\n  ----\t------\t------\t-------\n")
		for _, c := range conds {
			w.Write(describe.LEVEL_1, "%s\t%s\t%s\t%s\n", c[0], c[1], c[2], c[3])
		}
	}
	if events != nil {
		describe.DescribeEvents(events, w)
	}
	_ = tw.Flush() // writes to a buffer cannot fail
	return buf.String()
}

func labelsText(m map[string]string) string {
	if len(m) == 0 {
		return "<none>"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func deref(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}
