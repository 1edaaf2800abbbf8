//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// The Advanced DaemonSet and the Advanced StatefulSet update their pods in place through the
// real kubelet.

const adsName = "sample-ads"

func sampleDaemonSet(image string) string {
	return inPlaceYAML("apps.kruise.io/v1alpha1", "DaemonSet", adsName, image, `
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      rollingUpdateType: InPlaceIfPossible`)
}

// inPlaceYAML is a workload of apiVersion and kind named name in ns, whose pods, labelled
// app=<name>, run one container main of image with the InPlaceUpdateReady readiness gate and
// a grace period of one second. spec adds the kind's own spec fields, each line starting with
// a newline and two spaces.
func inPlaceYAML(apiVersion, kind, name, image, spec string) string {
	return podWorkload{apiVersion: apiVersion, kind: kind, name: name, grace: 1, inPlaceReadyGate: true, containers: mainContainer(image), spec: spec}.String()
}

// adsPod returns the DaemonSet's one live pod on the node, or an error saying why not.
func (cl *cluster) adsPod(ctx context.Context) (*corev1.Pod, error) {
	live, err := framework.LivePods(ctx, cl.c, ns, adsName)
	if err != nil {
		return nil, err
	}
	if len(live) != 1 {
		return nil, fmt.Errorf("%d live pods", len(live))
	}
	return &live[0], nil
}

// testAdvancedDaemonSetInPlace runs an Advanced DaemonSet on the real node and updates its image
// in place: the pod keeps its name, UID and IP, its container restarts once, and it runs the
// registry's new digest.
func testAdvancedDaemonSetInPlace(t *testing.T, cl *cluster) {
	_, err := cl.kubectlRun(t, sampleDaemonSet(cl.registry+"/e2e/sample:v1"), "apply", "-f", "-")
	require.NoError(t, err, "apply the Advanced DaemonSet")
	defer func() { _, _ = cl.kubectlRun(t, "", "delete", "ads", adsName, "-n", ns, "--wait=true") }()

	var before *corev1.Pod
	framework.Eventually(t, rolloutTimeout, "the daemon pod Ready on the node", func(ctx context.Context) error {
		ds := &appsv1alpha1.DaemonSet{}
		if err := cl.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: adsName}, ds); err != nil {
			return err
		}
		if st := ds.Status; st.DesiredNumberScheduled != 1 || st.NumberAvailable != 1 || st.UpdatedNumberScheduled != 1 {
			return fmt.Errorf("status %+v", st)
		}
		p, err := cl.adsPod(ctx)
		if err != nil {
			return err
		}
		before = p
		return framework.Want(podReady(p) && p.Spec.NodeName == cl.nodeName, "pod "+p.Name+" not Ready on "+cl.nodeName)
	})
	out, err := cl.kubectlOut("get", "ads", adsName, "-n", ns)
	require.NoError(t, err, out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2, out)
	require.Equal(t, "NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE AGE", strings.Join(strings.Fields(lines[0]), " "), "kubectl columns as in 1.8")
	require.Equal(t, adsName+" 1 1 1 1 1", strings.Join(strings.Fields(lines[1])[:6], " "), "kubectl get ads")

	newImage := cl.registry + "/e2e/sample:v2"
	digest := cl.registryDigest(t, newImage)
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"main","image":%q}]}}}}`, newImage)
	_, err = cl.kubectlRun(t, "", "patch", "ads", adsName, "-n", ns, "--type", "merge", "-p", patch)
	require.NoError(t, err, "patch the image")
	var after *corev1.Pod
	framework.Eventually(t, rolloutTimeout, "the daemon pod restarted in place on the new image", func(ctx context.Context) error {
		ds := &appsv1alpha1.DaemonSet{}
		if err := cl.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: adsName}, ds); err != nil {
			return err
		}
		if st := ds.Status; st.ObservedGeneration != ds.Generation || st.UpdatedNumberScheduled != 1 || st.NumberAvailable != 1 {
			return fmt.Errorf("status %+v", st)
		}
		p, err := cl.adsPod(ctx)
		if err != nil {
			return err
		}
		if len(p.Status.ContainerStatuses) == 0 {
			return errors.New("no container status")
		}
		cs := p.Status.ContainerStatuses[0]
		after = p
		return framework.Want(podReady(p) && cs.RestartCount == 1 && strings.HasSuffix(cs.ImageID, "@"+digest),
			fmt.Sprintf("pod %s ready %v restarts %d imageID %s", p.Name, podReady(p), cs.RestartCount, cs.ImageID))
	})
	require.Equal(t, before.Name, after.Name, "the pod kept its name")
	require.Equal(t, before.UID, after.UID, "the pod kept its UID")
	require.Equal(t, before.Status.PodIP, after.Status.PodIP, "the pod kept its IP")
	require.Equal(t, cl.registry+"/e2e/sample@"+digest, after.Status.ContainerStatuses[0].ImageID, "the pod runs the registry's v2 digest")
	t.Logf("Advanced DaemonSet in place: pod %s kept name, UID and IP %s; restartCount 1; imageID %s", after.Name, after.Status.PodIP, digest)
}

const astsName = "db"

func sampleStatefulSet(image string) string {
	return inPlaceYAML("apps.kruise.io/v1beta1", "StatefulSet", astsName, image, `
  replicas: 3
  serviceName: `+astsName+`
  podManagementPolicy: Parallel
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      podUpdatePolicy: InPlaceIfPossible
      maxUnavailable: 1`)
}

func (cl *cluster) statefulSet(t *testing.T) *appsv1beta1.StatefulSet {
	return framework.Get[appsv1beta1.StatefulSet](t, cl.c, client.ObjectKey{Namespace: ns, Name: astsName})
}

// astsSettled reports whether the StatefulSet's status is at its generation with its three
// replicas updated and ready, and the update finished.
func astsSettled(set *appsv1beta1.StatefulSet) (bool, string) {
	s := set.Status
	ok, msg := rollout{set.Generation, s.ObservedGeneration, s.Replicas, s.UpdatedReplicas, s.UpdatedReadyReplicas, s.ReadyReplicas}.done(3)
	return ok && s.CurrentRevision == s.UpdateRevision, msg + fmt.Sprintf(", revisions %s/%s", s.CurrentRevision, s.UpdateRevision)
}

func podNames(m map[string]podState) string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// testStatefulSet: an Advanced StatefulSet updates its image in place through the real kubelet
// (same pod name, UID and IP, restartCount 1, the new digest), then a reserveOrdinals change
// deletes exactly the reserved pod; the set is deleted at the end so that uninstall can go on.
func testStatefulSet(t *testing.T, cl *cluster) {
	_, err := cl.kubectlRun(t, sampleStatefulSet(cl.registry+"/e2e/sample:v1"), "apply", "-f", "-")
	require.NoError(t, err, "apply the Advanced StatefulSet")
	framework.Eventually(t, rolloutTimeout, "the Advanced StatefulSet Ready", func(context.Context) error {
		return framework.Want(astsSettled(cl.statefulSet(t)))
	})
	before := cl.podStates(t, astsName)
	require.Equal(t, "db-0,db-1,db-2", podNames(before))

	newImage := cl.registry + "/e2e/sample:v2"
	digest := cl.registryDigest(t, newImage)
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"main","image":%q}]}}}}`, newImage)
	_, err = cl.kubectlRun(t, "", "patch", "asts", astsName, "-n", ns, "--type", "merge", "-p", patch)
	require.NoError(t, err, "patch the image")
	framework.Eventually(t, rolloutTimeout, "every pod restarted in place on the new image", func(context.Context) error {
		if ok, msg := astsSettled(cl.statefulSet(t)); !ok {
			return errors.New(msg)
		}
		return cl.restartedOnceOn(t, astsName, digest)
	})
	after := cl.podStates(t, astsName)
	require.Len(t, after, 3)
	cl.requireUpdatedInPlace(t, before, after, digest)
	t.Logf("in place: db-0..2 kept name, UID and IP; restartCount 1; imageID %s", digest)

	_, err = cl.kubectlRun(t, "", "patch", "asts", astsName, "-n", ns, "--type", "merge", "-p", `{"spec":{"reserveOrdinals":[1]}}`)
	require.NoError(t, err, "reserve ordinal 1")
	framework.Eventually(t, rolloutTimeout, "db-1 replaced by db-3", func(context.Context) error {
		if ok, msg := astsSettled(cl.statefulSet(t)); !ok {
			return errors.New(msg)
		}
		return framework.Want(podNames(cl.podStates(t, astsName)) == "db-0,db-2,db-3", podNames(cl.podStates(t, astsName)))
	})
	final := cl.podStates(t, astsName)
	for _, n := range []string{"db-0", "db-2"} {
		require.Equal(t, after[n].uid, final[n].uid, "pod %s is untouched by the reserveOrdinals change", n)
	}
	t.Logf("reserveOrdinals [1]: db-1 deleted, db-3 made, db-0 and db-2 untouched")

	_, err = cl.kubectlRun(t, "", "delete", "asts", astsName, "-n", ns, "--wait=true")
	require.NoError(t, err, "delete the Advanced StatefulSet")
	framework.Eventually(t, podTimeout, "the Advanced StatefulSet is gone", func(ctx context.Context) error {
		err := cl.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: astsName}, &appsv1beta1.StatefulSet{})
		return framework.Want(apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err))
	})
}
