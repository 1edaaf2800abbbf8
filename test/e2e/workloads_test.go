//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// podWorkload is the manifest of a workload in ns whose pods are labelled app=<name>.
type podWorkload struct {
	apiVersion, kind, name string
	// replicas is left out when 0, as a DaemonSet has none.
	replicas int
	// labels are more pod labels after app, as flow-map entries (", track: stable").
	labels string
	// grace is the pods' termination grace period, in seconds.
	grace int
	// inPlaceReadyGate gives the pods the InPlaceUpdateReady readiness gate.
	inPlaceReadyGate bool
	// containers are the pods' containers: YAML list items at the pod spec's indent, as
	// mainContainer writes them.
	containers string
	// spec adds the kind's own spec fields, each line starting with a newline and two spaces.
	spec string
}

func (w podWorkload) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n", w.apiVersion, w.kind, w.name, ns)
	if w.replicas > 0 {
		fmt.Fprintf(&b, "  replicas: %d\n", w.replicas)
	}
	fmt.Fprintf(&b, "  selector:\n    matchLabels: {app: %[1]s}\n  template:\n    metadata:\n      labels: {app: %[1]s%[2]s}\n", w.name, w.labels)
	fmt.Fprintf(&b, "    spec:\n      terminationGracePeriodSeconds: %d\n", w.grace)
	if w.inPlaceReadyGate {
		b.WriteString("      readinessGates:\n      - conditionType: InPlaceUpdateReady\n")
	}
	b.WriteString("      containers:\n" + w.containers + w.spec + "\n")
	return b.String()
}

// mainContainer is a pod's container main running image, as a podWorkload's containers; more
// lines for it follow at the container's indent.
func mainContainer(image string, more ...string) string {
	c := "      - name: main\n        image: " + image
	for _, l := range more {
		c += "\n        " + l
	}
	return c
}

// inPlaceCloneSet is the update strategy of a CloneSet that updates in place, at most
// maxUnavailable pods (a number or a percentage; none named when empty) at a time, as a
// podWorkload's spec.
func inPlaceCloneSet(maxUnavailable string) string {
	s := "\n  updateStrategy:\n    type: InPlaceIfPossible"
	if maxUnavailable != "" {
		s += "\n    maxUnavailable: " + maxUnavailable
	}
	return s
}

// rollout is the part of a workload's status that says whether its pods run its template.
type rollout struct {
	generation, observed                   int64
	replicas, updated, updatedReady, ready int32
}

// done reports whether the status is at its generation with want replicas, all updated and
// ready, and says where it stands.
func (r rollout) done(want int32) (bool, string) {
	msg := fmt.Sprintf("generation %d observed %d, replicas %d updated %d updatedReady %d ready %d",
		r.generation, r.observed, r.replicas, r.updated, r.updatedReady, r.ready)
	return r.observed == r.generation && r.replicas == want && r.updated == want && r.updatedReady == want && r.ready == want, msg
}

// restartedOnceOn says which pod of app, if any, has not restarted its container exactly once
// on the registry's image of digest.
func (cl *cluster) restartedOnceOn(t *testing.T, app, digest string) error {
	for n, st := range cl.podStates(t, app) {
		if st.restarts != 1 || !strings.HasSuffix(st.imageID, "@"+digest) {
			return fmt.Errorf("pod %s restarts %d imageID %s", n, st.restarts, st.imageID)
		}
	}
	return nil
}

// requireUpdatedInPlace fails t unless every pod of before is in after with the same name, UID
// and IP, its container restarted once, on the registry's v2 image of digest.
func (cl *cluster) requireUpdatedInPlace(t *testing.T, before, after map[string]podState, digest string) {
	t.Helper()
	requireKept(t, before, after, 1)
	for n := range before {
		require.Equal(t, cl.registry+"/e2e/sample@"+digest, after[n].imageID, "pod %s runs the registry's v2 digest", n)
	}
}

// requireKept fails t unless every pod of before is in after with the same name, UID and IP, its
// container restarted restarts times.
func requireKept(t *testing.T, before, after map[string]podState, restarts int32) {
	t.Helper()
	for n, b := range before {
		a, ok := after[n]
		require.True(t, ok, "pod %s kept its name", n)
		require.Equal(t, b.uid, a.uid, "pod %s kept its UID", n)
		require.Equal(t, b.ip, a.ip, "pod %s kept its IP", n)
		require.Equal(t, restarts, a.restarts, "pod %s restarted its container %d times", n, restarts)
	}
}
