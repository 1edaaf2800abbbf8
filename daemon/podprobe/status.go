package podprobe

import (
	"sort"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// probeKey names one probe of one pod; a change of any part (a recreated pod, a new IP)
// starts a new worker.
type probeKey struct {
	namespace, pod, uid, ip string
	container, probe        string
}

// result is the latest result of one probe worth writing.
type result struct {
	state appsv1alpha1.ProbeState
	msg   string
	// at is when the probe ran.
	at metav1.Time
}

// keysOf returns the probe keys spec asks for, with each probe's spec.
func keysOf(spec appsv1alpha1.NodePodProbeSpec) map[probeKey]*appsv1alpha1.ContainerProbeSpec {
	out := map[probeKey]*appsv1alpha1.ContainerProbeSpec{}
	for _, pp := range spec.PodProbes {
		for i := range pp.Probes {
			p := &pp.Probes[i]
			out[probeKey{namespace: pp.Namespace, pod: pp.Name, uid: pp.UID, ip: pp.IP, container: p.ContainerName, probe: p.Name}] = &p.Probe
		}
	}
	return out
}

// buildStatus returns the status to write: the states of cur for probes spec still holds,
// updated from results. A state's lastTransitionTime moves only when its state changes. Pods
// and probes are sorted by name, so the same results always give the same status.
func buildStatus(spec appsv1alpha1.NodePodProbeSpec, cur appsv1alpha1.NodePodProbeStatus, results map[probeKey]result) appsv1alpha1.NodePodProbeStatus {
	type podRef struct{ namespace, name, uid string }
	wanted := map[podRef]map[string]bool{}
	for k := range keysOf(spec) {
		ref := podRef{k.namespace, k.pod, k.uid}
		if wanted[ref] == nil {
			wanted[ref] = map[string]bool{}
		}
		wanted[ref][k.probe] = true
	}
	states := map[podRef]map[string]appsv1alpha1.ContainerProbeState{}
	for _, ps := range cur.PodProbeStatuses {
		ref := podRef{ps.Namespace, ps.Name, ps.UID}
		for _, st := range ps.ProbeStates {
			if !wanted[ref][st.Name] {
				continue
			}
			if states[ref] == nil {
				states[ref] = map[string]appsv1alpha1.ContainerProbeState{}
			}
			states[ref][st.Name] = st
		}
	}
	for k, r := range results {
		ref := podRef{k.namespace, k.pod, k.uid}
		if !wanted[ref][k.probe] {
			continue
		}
		if states[ref] == nil {
			states[ref] = map[string]appsv1alpha1.ContainerProbeState{}
		}
		st, had := states[ref][k.probe]
		if !had || st.State != r.state {
			st.LastTransitionTime = r.at
		}
		st.Name, st.State, st.Message, st.LastProbeTime = k.probe, r.state, r.msg, r.at
		states[ref][k.probe] = st
	}

	out := appsv1alpha1.NodePodProbeStatus{}
	for ref, byName := range states {
		ps := appsv1alpha1.PodProbeStatus{Namespace: ref.namespace, Name: ref.name, UID: ref.uid}
		for _, st := range byName {
			ps.ProbeStates = append(ps.ProbeStates, st)
		}
		sort.Slice(ps.ProbeStates, func(i, j int) bool { return ps.ProbeStates[i].Name < ps.ProbeStates[j].Name })
		out.PodProbeStatuses = append(out.PodProbeStatuses, ps)
	}
	sort.Slice(out.PodProbeStatuses, func(i, j int) bool {
		a, b := out.PodProbeStatuses[i], out.PodProbeStatuses[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.UID < b.UID
	})
	return out
}

// statusEqual reports whether two statuses say the same, times compared to the second as the
// apiserver stores them.
func statusEqual(a, b appsv1alpha1.NodePodProbeStatus) bool {
	return apiequality.Semantic.DeepEqual(truncate(a), truncate(b))
}

func truncate(s appsv1alpha1.NodePodProbeStatus) appsv1alpha1.NodePodProbeStatus {
	s = *s.DeepCopy()
	for i := range s.PodProbeStatuses {
		for j := range s.PodProbeStatuses[i].ProbeStates {
			st := &s.PodProbeStatuses[i].ProbeStates[j]
			st.LastProbeTime = metav1.NewTime(st.LastProbeTime.Rfc3339Copy().Time)
			st.LastTransitionTime = metav1.NewTime(st.LastTransitionTime.Rfc3339Copy().Time)
		}
	}
	return s
}
