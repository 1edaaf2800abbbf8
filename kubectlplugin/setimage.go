package kubectlplugin

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubectl/pkg/cmd/set"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func newSetCommand(o *Options) *cobra.Command {
	subs := []*cobra.Command{
		orKubectl(o, newSetImageCommand(o), set.NewCmdImage),
		asKubectl(o, set.NewCmdSelector),
		asKubectl(o, set.NewCmdSubject),
	}
	for _, k := range kubectlSetCommands {
		subs = append(subs, kubectlSet(o, k.build, k.operation))
	}
	return parentCommand("set", "Set specific features on workloads", "one of env, image, resources, selector, serviceaccount, subject", subs...)
}

// splitImageArgs separates the resources from the CONTAINER=IMAGE pairs.
func splitImageArgs(args []string) (resources []string, images map[string]string, err error) {
	images = map[string]string{}
	for _, a := range args {
		name, image, ok := strings.Cut(a, "=")
		if !ok {
			if len(images) > 0 {
				return nil, nil, fmt.Errorf("argument %q: resources must come before the CONTAINER=IMAGE pairs", a)
			}
			resources = append(resources, a)
			continue
		}
		if name == "" || image == "" {
			return nil, nil, fmt.Errorf("argument %q: want CONTAINER=IMAGE, or *=IMAGE for every container", a)
		}
		images[name] = image
	}
	if len(images) == 0 {
		return nil, nil, fmt.Errorf("at least one image update is required: CONTAINER=IMAGE")
	}
	return resources, images, nil
}

// setImages applies the pairs to the template's containers and init containers. Every named
// container must exist; "*" sets them all.
func setImages(t *corev1.PodTemplateSpec, images map[string]string) error {
	found := map[string]bool{}
	set := func(cs []corev1.Container) {
		for i := range cs {
			if img, ok := images[cs[i].Name]; ok {
				cs[i].Image = img
				found[cs[i].Name] = true
			} else if img, ok := images["*"]; ok {
				cs[i].Image = img
			}
		}
	}
	set(t.Spec.InitContainers)
	set(t.Spec.Containers)
	for name := range images {
		if name != "*" && !found[name] {
			return fmt.Errorf("unable to find container named %q", name)
		}
	}
	return nil
}

func newSetImageCommand(o *Options) *cobra.Command {
	var images map[string]string
	return workloadCommand{
		use:     "image (TYPE NAME... | TYPE/NAME...) CONTAINER_NAME_1=CONTAINER_IMAGE_1 ... CONTAINER_NAME_N=CONTAINER_IMAGE_N",
		short:   "Update the images of a workload's pod template",
		example: `  kubectl kruise set image cloneset/web nginx=nginx:1.27`,
		targets: func(args []string) (resources []string, err error) {
			resources, images, err = splitImageArgs(args)
			return resources, err
		},
		each: func(a action, t target) error {
			obj, _, err := a.change(a.ctx, t, func(obj client.Object) error {
				return setImages(t.kind.template(obj), images)
			})
			if err != nil {
				return err
			}
			return a.print("image updated", obj)
		},
	}.command(o)
}
