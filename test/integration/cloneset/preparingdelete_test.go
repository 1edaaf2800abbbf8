package cloneset

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// TestSpecifiedDeleteHeldByPreDeleteStillCountsAsAReplica checks a pod marked specified-delete
// that the preDelete hook holds in PreparingDelete keeps counting as a replica: no replacement
// is created and status.replicas stays 3 until the hook lets it go; with the
// apps.kruise.io/cloneset-scaling-exclude-preparing-delete label the replacement comes at once.
func TestSpecifiedDeleteHeldByPreDeleteStillCountsAsAReplica(t *testing.T) {
	for _, exclude := range []bool{false, true} {
		t.Run(fmt.Sprintf("exclude-preparing-delete=%v", exclude), func(t *testing.T) {
			ns := newNamespace(t)
			cs := kinds.CloneSet("web", ns).Replicas(3).TemplateLabel("hold", "true").PreDeleteHook("hold", "true").Obj()
			if exclude {
				cs.Labels = map[string]string{appsv1alpha1.CloneSetScalingExcludePreparingDeleteKey: "true"}
			}
			create(t, cs)
			waitSettled(t, ns, "web", 3, settle)
			first := framework.MustLivePods(t, env.Client, ns, "web")[0]
			chosen := first.Name

			patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, appsv1alpha1.SpecifiedDeleteKey))
			if err := env.Client.Patch(context.Background(), podRef(ns, chosen), client.RawPatch(types.MergePatchType, patch)); err != nil {
				t.Fatal(err)
			}
			framework.Eventually(t, settle, "the chosen pod in PreparingDelete", func(ctx context.Context) error {
				p, gone, err := getPod(ctx, ns, chosen, first.UID)
				if err != nil {
					return err
				}
				if gone {
					return fmt.Errorf("pod %s gone while the hook holds it", chosen)
				}
				return framework.Want(state(p) == appspub.LifecycleStatePreparingDelete, fmt.Sprintf("state %q", state(p)))
			})
			if exclude {
				framework.Eventually(t, settle, "a replacement beside the held pod", func(ctx context.Context) error {
					pods, err := framework.LivePods(ctx, env.Client, ns, "web")
					if err != nil {
						return err
					}
					return framework.Want(len(pods) == 4, fmt.Sprintf("%d live pods", len(pods)))
				})
				return
			}
			framework.Consistently(t, 3*time.Second, "no replacement while the hook holds the pod", func(ctx context.Context) error {
				pods, err := framework.LivePods(ctx, env.Client, ns, "web")
				if err != nil {
					return err
				}
				got := getCloneSet(t, ns, "web").Status.Replicas
				return framework.Want(len(pods) == 3 && got == 3, fmt.Sprintf("%d live pods, status.replicas %d", len(pods), got))
			})
			release(t, ns, chosen)
			gone(t, ns, "web", chosen)
			waitSettled(t, ns, "web", 3, settle)
		})
	}
}
