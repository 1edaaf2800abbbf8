//go:build e2e

package e2e

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

const (
	// preStopHold is how long the held sidecar's old container keeps running (and Ready) after
	// its in-place update is written: longer than the budget keeps an update's record (10 s).
	preStopHold = 25 * time.Second
	// heldWindow is how long the held scenario watches the second pod: the old container's
	// preStop hold, the record's expiry and the failing pull after it.
	heldWindow = preStopHold + 30*time.Second
	// missingTag is a tag the loopback registry does not serve: the kubelet's pull fails.
	missingTag = "missing"
)

// testFidelity runs, in parallel, three behaviours of 1.8 on the real kubelet: a SidecarSet
// brings every pod to a good image after an unpullable one; a budget lets the garbage collector
// take the pods of a deleted Deployment; and a budget counts a pod whose sidecar update has not
// taken effect as unavailable.
func testFidelity(t *testing.T, cl *cluster) {
	for _, s := range []step{
		{"after an unpullable sidecar image a good one reaches every matched pod", testSidecarRecovers},
		{"a budget lets the garbage collector delete the pods of a deleted Deployment", testBudgetLetsGCTakeOrphans},
		{"a budget holds a second sidecar update while the first has not taken effect", testBudgetHoldsUnsettledSidecar},
	} {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			s.run(t, cl)
		})
	}
}

// tagInRegistry makes the registry serve src's manifest under the tag of dst too.
func (cl *cluster) tagInRegistry(t *testing.T, src, dst string) {
	t.Helper()
	from, err := name.ParseReference(src, name.Insecure)
	require.NoError(t, err)
	to, err := name.NewTag(dst, name.Insecure)
	require.NoError(t, err)
	desc, err := remote.Get(from)
	require.NoError(t, err, "GET %s", src)
	require.NoError(t, remote.Tag(to, desc), "tag %s as %s", src, dst)
}

// apply applies the manifests and deletes what delete names (kubectl delete arguments) when the
// test ends.
func (cl *cluster) apply(t *testing.T, manifests string, deletes ...[]string) {
	t.Helper()
	_, err := cl.kubectlRun(t, manifests, "apply", "-f", "-")
	require.NoError(t, err, "apply")
	t.Cleanup(func() {
		for _, d := range deletes {
			_, _ = cl.kubectlRun(t, "", append([]string{"delete", "--ignore-not-found", "--wait=true"}, d...)...)
		}
	})
}

// workloadManifest is a workload of replicas app=<app> pods running image in container main,
// with the given grace period; a CloneSet updates in place, all pods at once.
func workloadManifest(apiVersion, kind, app, image string, replicas, grace int) string {
	strategy := ""
	if kind == "CloneSet" {
		strategy = inPlaceCloneSet("100%")
	}
	return podWorkload{apiVersion: apiVersion, kind: kind, name: app, replicas: replicas, grace: grace, containers: mainContainer(image), spec: strategy}.String()
}

func cloneSetManifest(app, image string, replicas, grace int) string {
	return workloadManifest("apps.kruise.io/v1alpha1", "CloneSet", app, image, replicas, grace)
}

func (cl *cluster) namedCloneSet(ctx context.Context, app string) (*appsv1alpha1.CloneSet, error) {
	cs := &appsv1alpha1.CloneSet{}
	return cs, cl.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: app}, cs)
}

// testSameImageIDInPlace: 1.8 finishes an in-place update whose new tag names the image the pod
// runs already; the container is recreated, InPlaceUpdateReady returns to True and every
// replica counts as updated and ready. containerd reports a container's image as the first of
// its image's tags (here the old one, sample:v1), so the status image alone cannot show it: 1.8
// then goes by the hashes kruise-daemon records in apps.kruise.io/runtime-containers-meta.
func testSameImageIDInPlace(t *testing.T, cl *cluster) {
	const app = "same-id-e2e"
	v1 := cl.registry + "/e2e/sample:v1"
	alias := cl.registry + "/e2e/sample:v1-mainline"
	cl.tagInRegistry(t, v1, alias)
	digest := cl.registryDigest(t, v1)
	require.Equal(t, digest, cl.registryDigest(t, alias), "the two tags name one image")

	cl.apply(t, cloneSetManifest(app, v1, 2, 1), []string{"clone", app, "-n", ns})
	framework.Eventually(t, rolloutTimeout, "two pods ready on v1", func(ctx context.Context) error {
		cs, err := cl.namedCloneSet(ctx, app)
		if err != nil {
			return err
		}
		s := cs.Status
		return framework.Want(s.ObservedGeneration == cs.Generation && s.UpdatedReadyReplicas == 2 && s.ReadyReplicas == 2, fmt.Sprintf("status %+v", s))
	})
	before := cl.podStates(t, app)
	require.Len(t, before, 2)

	_, err := cl.kubectlRun(t, "", "patch", "clone", app, "-n", ns, "--type", "merge", "-p",
		fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"main","image":%q}]}}}}`, alias))
	require.NoError(t, err, "patch the image to the other tag")
	framework.Eventually(t, rolloutTimeout, "both pods recreated their container in place and count as updated and ready", func(ctx context.Context) error {
		pods, err := cl.livePods(ctx, app)
		if err != nil {
			return err
		}
		for n, p := range pods {
			c := framework.ContainerStatus(p, "main")
			if c == nil || c.RestartCount != 1 || !c.Ready {
				return fmt.Errorf("pod %s main %+v", n, c)
			}
			if framework.PodCondition(p, appspub.InPlaceUpdateReady) != corev1.ConditionTrue {
				return fmt.Errorf("pod %s InPlaceUpdateReady is not True; main reports image %s, image ID %s", n, c.Image, c.ImageID)
			}
		}
		cs, err := cl.namedCloneSet(ctx, app)
		if err != nil {
			return err
		}
		s := cs.Status
		return framework.Want(s.ObservedGeneration == cs.Generation && s.UpdatedReplicas == 2 && s.UpdatedReadyReplicas == 2, fmt.Sprintf("status %+v", s))
	})
	for n, p := range cl.podStates(t, app) {
		require.Equal(t, before[n].uid, p.uid, "pod %s kept its UID", n)
		require.True(t, strings.HasSuffix(p.imageID, "@"+digest), "pod %s runs the same image ID %s, got %s", n, digest, p.imageID)
	}
	t.Logf("same image ID: 2 pods restarted in place from v1 to v1-mainline (%s) and count as updated and ready", digest)
}

// sidecarSet is a SidecarSet that injects one container running image into app's pods in the
// e2e namespace.
type sidecarSet struct {
	name, app, image string
	// container is the injected container's name: agent when empty.
	container string
	// maxUnavailable bounds how many pods are updated at a time: the default when empty.
	maxUnavailable string
	// more are the container's lines after its image, at the container's indent.
	more []string
}

func (s sidecarSet) String() string {
	container := cmp.Or(s.container, "agent")
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: apps.kruise.io/v1alpha1\nkind: SidecarSet\nmetadata: {name: %s}\nspec:\n  namespace: %s\n", s.name, ns)
	fmt.Fprintf(&b, "  selector:\n    matchLabels: {app: %s}\n  containers:\n  - name: %s\n    image: %s\n", s.app, container, s.image)
	for _, l := range s.more {
		b.WriteString("    " + l + "\n")
	}
	if s.maxUnavailable != "" {
		b.WriteString("  updateStrategy: {maxUnavailable: " + s.maxUnavailable + "}\n")
	}
	return b.String()
}

// preStopSleep is a sidecarSet's container line for a preStop sleep of seconds.
func preStopSleep(seconds int) string {
	return fmt.Sprintf("lifecycle: {preStop: {sleep: {seconds: %d}}}", seconds)
}

func (cl *cluster) setSidecarImage(t *testing.T, setName, image string) {
	t.Helper()
	_, err := cl.kubectlRun(t, "", "patch", "sidecarset", setName, "--type", "json", "-p",
		fmt.Sprintf(`[{"op":"replace","path":"/spec/containers/0/image","value":%q}]`, image))
	require.NoError(t, err, "patch the sidecar image")
}

func (cl *cluster) sidecarSetStatus(ctx context.Context, setName string) (appsv1alpha1.SidecarSetStatus, error) {
	s := &appsv1alpha1.SidecarSet{}
	if err := cl.c.Get(ctx, types.NamespacedName{Name: setName}, s); err != nil {
		return appsv1alpha1.SidecarSetStatus{}, err
	}
	if s.Status.ObservedGeneration != s.Generation {
		return s.Status, fmt.Errorf("observedGeneration %d, generation %d", s.Status.ObservedGeneration, s.Generation)
	}
	return s.Status, nil
}

// testSidecarRecovers: in 1.8 a sidecar that is not ready (its image cannot be pulled) may be
// upgraded again, and not-ready pods do not spend maxUnavailable, so a good image set after a
// bad one reaches every matched pod.
func testSidecarRecovers(t *testing.T, cl *cluster) {
	const app, setName = "recover-e2e", "e2e-recover"
	v1, v2 := cl.registry+"/e2e/sample:v1", cl.registry+"/e2e/sample:v2"
	cl.apply(t, sidecarSet{name: setName, app: app, image: v1, maxUnavailable: "1"}.String()+"---\n"+cloneSetManifest(app, v1, 2, 1),
		[]string{"clone", app, "-n", ns}, []string{"sidecarset", setName})
	framework.Eventually(t, rolloutTimeout, "two pods with the agent injected, updated and ready", func(ctx context.Context) error {
		s, err := cl.sidecarSetStatus(ctx, setName)
		return errors.Join(err, framework.Want(s.MatchedPods == 2 && s.UpdatedPods == 2 && s.ReadyPods == 2, fmt.Sprintf("status %+v", s)))
	})

	cl.setSidecarImage(t, setName, cl.registry+"/e2e/sample:"+missingTag)
	framework.Eventually(t, rolloutTimeout, "one pod's agent fails to pull the unpullable image", func(ctx context.Context) error {
		pods, err := cl.livePods(ctx, app)
		if err != nil {
			return err
		}
		for _, p := range pods {
			c := framework.ContainerStatus(p, "agent")
			if strings.HasSuffix(specImage(p, "agent"), ":"+missingTag) && c != nil && c.State.Waiting != nil &&
				(c.State.Waiting.Reason == "ErrImagePull" || c.State.Waiting.Reason == "ImagePullBackOff") {
				return nil
			}
		}
		return errors.New("no agent waiting on a failed pull yet")
	})

	digest := cl.registryDigest(t, v2)
	cl.setSidecarImage(t, setName, v2)
	framework.Eventually(t, rolloutTimeout, "every pod's agent runs v2 and is ready", func(ctx context.Context) error {
		pods, err := cl.livePods(ctx, app)
		if err != nil {
			return err
		}
		if len(pods) != 2 {
			return fmt.Errorf("%d pods", len(pods))
		}
		for n, p := range pods {
			c := framework.ContainerStatus(p, "agent")
			if specImage(p, "agent") != v2 || c == nil || !c.Ready || !strings.HasSuffix(c.ImageID, "@"+digest) {
				return fmt.Errorf("pod %s agent spec %s status %+v", n, specImage(p, "agent"), c)
			}
		}
		s, err := cl.sidecarSetStatus(ctx, setName)
		return errors.Join(err, framework.Want(s.MatchedPods == 2 && s.UpdatedPods == 2 && s.UpdatedReadyPods == 2 && s.ReadyPods == 2, fmt.Sprintf("status %+v", s)))
	})
	t.Logf("sidecar recovery: after an unpullable image both pods run the agent on v2 (%s)", digest)
}

func budgetManifest(app string, maxUnavailable int) string {
	return fmt.Sprintf(`apiVersion: policy.kruise.io/v1alpha1
kind: PodUnavailableBudget
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  selector:
    matchLabels: {app: %[1]s}
  maxUnavailable: %[3]d
`, app, ns, maxUnavailable)
}

// budgetStatus reads the budget's status at its generation.
func (cl *cluster) budgetStatus(ctx context.Context, app string) (policyv1alpha1.PodUnavailableBudgetStatus, error) {
	pub := &policyv1alpha1.PodUnavailableBudget{}
	if err := cl.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: app}, pub); err != nil {
		return pub.Status, err
	}
	if pub.Status.ObservedGeneration != pub.Generation {
		return pub.Status, fmt.Errorf("observedGeneration %d, generation %d", pub.Status.ObservedGeneration, pub.Generation)
	}
	return pub.Status, nil
}

func budgetNumbers(s policyv1alpha1.PodUnavailableBudgetStatus) string {
	return fmt.Sprintf("total %d desired %d current %d allowed %d", s.TotalReplicas, s.DesiredAvailable, s.CurrentAvailable, s.UnavailableAllowed)
}

// testBudgetLetsGCTakeOrphans: 1.8 counts no replica for pods whose workload is gone or being
// deleted, so once a Deployment a budget selects is deleted, the garbage collector's deletions
// of its pods go through although the budget allowed no disruption before.
func testBudgetLetsGCTakeOrphans(t *testing.T, cl *cluster) {
	const app = "pub-gc-e2e"
	deployment := workloadManifest("apps/v1", "Deployment", app, cl.registry+"/e2e/sample:v1", 1, 1)
	cl.apply(t, deployment+"---\n"+budgetManifest(app, 0),
		[]string{"podunavailablebudget", app, "-n", ns}, []string{"deployment", app, "-n", ns})
	framework.Eventually(t, rolloutTimeout, "the budget protects the Deployment's one ready pod", func(ctx context.Context) error {
		s, err := cl.budgetStatus(ctx, app)
		return errors.Join(err, framework.Want(s.TotalReplicas == 1 && s.DesiredAvailable == 1 && s.CurrentAvailable == 1 && s.UnavailableAllowed == 0, budgetNumbers(s)))
	})
	pods, err := cl.livePods(context.Background(), app)
	require.NoError(t, err)
	require.Len(t, pods, 1)
	var pod string
	for n := range pods {
		pod = n
	}
	out, err := cl.kubectlOut("delete", "pod", pod, "-n", ns, "--dry-run=server")
	require.Error(t, err, "deleting the protected pod while its Deployment stands is refused:\n%s", out)

	_, err = cl.kubectlRun(t, "", "delete", "deployment", app, "-n", ns, "--wait=false")
	require.NoError(t, err, "delete the Deployment")
	framework.Eventually(t, podTimeout, "the garbage collector deletes the Deployment's pod", func(ctx context.Context) error {
		p := &corev1.Pod{}
		err := cl.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: pod}, p)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errors.Join(err, fmt.Errorf("pod %s still there (deleting: %v)", pod, p.DeletionTimestamp != nil))
	})
	framework.Eventually(t, podTimeout, "the budget holds no replica", func(ctx context.Context) error {
		s, err := cl.budgetStatus(ctx, app)
		return errors.Join(err, framework.Want(s.TotalReplicas == 0 && s.DesiredAvailable == 0, budgetNumbers(s)))
	})
	t.Logf("orphans: the Deployment's pod %s was garbage-collected past a budget of maxUnavailable 0", pod)
}

// testBudgetHoldsUnsettledSidecar: 1.8 counts a pod as available only once its container
// statuses match its spec. The agent's old container keeps running, Ready, for preStopHold
// after its in-place update to an image that cannot be pulled; the budget's record of that
// update expires meanwhile, and the pod must still count as unavailable, so the SidecarSet
// (maxUnavailable 100%) never gets the second pod's update past a budget of maxUnavailable 1.
func testBudgetHoldsUnsettledSidecar(t *testing.T, cl *cluster) {
	const app, setName = "pub-sidecar-e2e", "e2e-pub-agent"
	v1 := cl.registry + "/e2e/sample:v1"
	broken := cl.registry + "/e2e/sample:" + missingTag
	cl.apply(t, sidecarSet{name: setName, app: app, image: v1, maxUnavailable: "100%",
		more: []string{preStopSleep(int(preStopHold / time.Second))}}.String()+"---\n"+
		cloneSetManifest(app, v1, 2, int(2*preStopHold/time.Second))+"---\n"+budgetManifest(app, 1),
		[]string{"podunavailablebudget", app, "-n", ns}, []string{"clone", app, "-n", ns}, []string{"sidecarset", setName})
	framework.Eventually(t, rolloutTimeout, "the budget counts both pods available", func(ctx context.Context) error {
		s, err := cl.budgetStatus(ctx, app)
		return errors.Join(err, framework.Want(s.TotalReplicas == 2 && s.DesiredAvailable == 1 && s.CurrentAvailable == 2 && s.UnavailableAllowed == 1, budgetNumbers(s)))
	})

	var mu sync.Mutex
	var maxBroken int
	var held, expiredWhileHeld bool
	look := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		pods, err := cl.livePods(ctx, app)
		if err != nil {
			return
		}
		s, err := cl.budgetStatus(ctx, app)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for name, p := range pods {
			if specImage(p, "agent") != broken {
				continue
			}
			n++
			c := framework.ContainerStatus(p, "agent")
			if podReady(p) && c != nil && c.State.Running != nil && c.Image != broken {
				held = true
				if _, recorded := s.UnavailablePods[name]; !recorded {
					expiredWhileHeld = true
				}
			}
		}
		maxBroken = max(maxBroken, n)
	}
	sampler := framework.Sample(500*time.Millisecond, look)
	cl.setSidecarImage(t, setName, broken)
	framework.Consistently(t, heldWindow, "at most one pod's agent is sent the unpullable image", func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		return framework.Want(maxBroken <= 1, fmt.Sprintf("%d pods' agents sent the unpullable image", maxBroken))
	})
	sampler.Stop()
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, 1, maxBroken, "the first pod's agent was sent the unpullable image")
	require.True(t, held, "the first pod's old agent was seen still running and Ready after its update")
	require.True(t, expiredWhileHeld, "the budget's record of the first update expired while the old agent still ran")
	t.Logf("unsettled sidecar: the budget held the second pod's update for %v; the first pod's old agent ran on after its record expired", heldWindow)
}
