package kubectlplugin

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func newScaleCommand(o *Options) *cobra.Command {
	pf := newPrintFlags("scaled")
	var replicas int32
	cmd := &cobra.Command{
		Use:     "scale --replicas=COUNT (TYPE NAME... | TYPE/NAME...)",
		Short:   "Set a new size for CloneSets and Advanced StatefulSets",
		Example: `  kubectl kruise scale --replicas=5 cloneset/web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if replicas < 0 {
				return fmt.Errorf("the --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")
			}
			return o.forEach(args, func(s *session, t target) error {
				if t.kind.setReplicas == nil {
					return fmt.Errorf("%s/%s cannot be scaled: a %s runs one pod on each eligible node; scale applies to %s",
						t.kind.qualified(), t.name, t.kind.gvk.Kind, strings.Join(scalableKinds(), " and "))
				}
				obj, _, err := s.change(cmd.Context(), t, func(obj client.Object) error {
					t.kind.setReplicas(obj, replicas)
					return nil
				})
				if err != nil {
					return err
				}
				return s.printObject(pf, "scaled", obj, cmd.OutOrStdout())
			})
		},
	}
	cmd.Flags().Int32Var(&replicas, "replicas", -1, "The new desired number of replicas. Required.")
	pf.AddFlags(cmd)
	return cmd
}

func scalableKinds() []string {
	var out []string
	for _, k := range kinds() {
		if k.setReplicas != nil {
			out = append(out, k.resource)
		}
	}
	return out
}
