package kubectlplugin

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func newScaleCommand(o *Options) *cobra.Command {
	var replicas int32
	return workloadCommand{
		use:     "scale --replicas=COUNT (TYPE NAME... | TYPE/NAME...)",
		short:   "Set a new size for CloneSets and Advanced StatefulSets",
		example: `  kubectl kruise scale --replicas=5 cloneset/web`,
		flags: func(fs *pflag.FlagSet) {
			fs.Int32Var(&replicas, "replicas", -1, "The new desired number of replicas. Required.")
		},
		targets: func(args []string) ([]string, error) {
			if replicas < 0 {
				return nil, fmt.Errorf("the --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")
			}
			return args, nil
		},
		each: func(a action, t target) error {
			if t.kind.setReplicas == nil {
				return fmt.Errorf("%s/%s cannot be scaled: a %s runs one pod on each eligible node; scale applies to %s",
					t.kind.qualified(), t.name, t.kind.gvk.Kind, strings.Join(scalableKinds(), " and "))
			}
			obj, _, err := a.change(a.ctx, t, func(obj client.Object) error {
				t.kind.setReplicas(obj, replicas)
				return nil
			})
			if err != nil {
				return err
			}
			return a.print("scaled", obj)
		},
	}.command(o)
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
