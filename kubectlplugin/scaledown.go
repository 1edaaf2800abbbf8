package kubectlplugin

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// planScaleDown is what scaledown writes: the chosen pods joined to scaleStrategy.podsToDelete
// and replicas lowered by the pods that were not in it already.
func planScaleDown(podsToDelete []string, replicas int32, chosen []string) ([]string, int32, error) {
	out := slices.Clone(podsToDelete)
	for _, p := range chosen {
		if slices.Contains(out, p) {
			continue
		}
		out = append(out, p)
		replicas--
	}
	if replicas < 0 {
		return nil, 0, fmt.Errorf("deleting pods %s would take replicas below 0", strings.Join(chosen, ", "))
	}
	return out, replicas, nil
}

// checkOwned refuses pods that do not exist or that the CloneSet does not control: the
// controller would drop their names and delete nothing.
func (a action) checkOwned(cs *appsv1alpha1.CloneSet, pods []string) error {
	for _, name := range pods {
		var pod corev1.Pod
		if err := a.c.Get(a.ctx, client.ObjectKey{Namespace: cs.Namespace, Name: name}, &pod); err != nil {
			return fmt.Errorf("--pods %s: %w", name, err)
		}
		if ref := metav1.GetControllerOf(&pod); ref == nil || ref.UID != cs.UID {
			return fmt.Errorf("--pods %s: the pod does not belong to cloneset %s; name pods of the cloneset, as listed by kubectl get pods -l %s",
				name, cs.Name, metav1.FormatLabelSelector(cs.Spec.Selector))
		}
	}
	return nil
}

func newScaleDownCommand(o *Options) *cobra.Command {
	var pods []string
	return workloadCommand{
		use:   "scaledown (TYPE NAME | TYPE/NAME) --pods=POD1,POD2",
		short: "Scale a CloneSet down by deleting the pods you choose",
		example: `  # Scale the CloneSet web down by two, deleting the pods web-abcde and web-fghij
  kubectl kruise scaledown cloneset/web --pods=web-abcde,web-fghij`,
		flags: func(fs *pflag.FlagSet) {
			fs.StringSliceVar(&pods, "pods", nil, "Names of the pods to delete, comma separated. Required.")
		},
		targets: func(args []string) ([]string, error) {
			if len(pods) == 0 {
				return nil, fmt.Errorf("the --pods=POD1,POD2 flag is required: name the pods of the cloneset to delete")
			}
			return args, nil
		},
		each: func(a action, t target) error {
			if t.kind.gvk.Kind != "CloneSet" {
				return fmt.Errorf("%s/%s cannot be scaled down by pod: scaledown applies to clonesets", t.kind.qualified(), t.name)
			}
			obj, _, err := a.change(a.ctx, t, func(obj client.Object) error {
				cs := obj.(*appsv1alpha1.CloneSet)
				if err := a.checkOwned(cs, pods); err != nil {
					return err
				}
				list, replicas, err := planScaleDown(cs.Spec.ScaleStrategy.PodsToDelete, ptr.Deref(cs.Spec.Replicas, 1), pods)
				if err != nil {
					return err
				}
				cs.Spec.ScaleStrategy.PodsToDelete, cs.Spec.Replicas = list, &replicas
				return nil
			})
			if err != nil {
				return err
			}
			return a.print("scaled down, deleting pods "+strings.Join(pods, ", "), obj)
		},
	}.command(o)
}
