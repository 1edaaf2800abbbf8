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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

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
