package kubectlplugin

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
)

// rolloutState is where a rollout stands: the line rollout status prints, and whether the
// rollout is over. err is set when waiting can never end well (rollout status then fails).
type rolloutState struct {
	message string
	done    bool
	err     error
}

func waiting(format string, a ...any) rolloutState {
	return rolloutState{message: fmt.Sprintf(format, a...)}
}

func finished(format string, a ...any) rolloutState {
	return rolloutState{message: fmt.Sprintf(format, a...), done: true}
}

// cloneSetState words a CloneSet's rollout as kubectl words a Deployment's. Pods kept at the
// old revision by a partition count as done: the rollout then reports "partitioned roll out
// complete" as kubectl does for a partitioned StatefulSet.
func cloneSetState(cs *appsv1alpha1.CloneSet) rolloutState {
	if cs.Generation > cs.Status.ObservedGeneration {
		return waiting("Waiting for cloneset spec update to be observed...\n")
	}
	replicas := int32(1)
	if cs.Spec.Replicas != nil {
		replicas = *cs.Spec.Replicas
	}
	partition := scaledPartition(cs.Spec.UpdateStrategy.Partition, replicas)
	want := replicas - partition
	st := cs.Status
	if st.UpdatedReplicas < want {
		if partition > 0 {
			return waiting("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...\n", st.UpdatedReplicas, want)
		}
		return waiting("Waiting for cloneset %q rollout to finish: %d out of %d new replicas have been updated...\n", cs.Name, st.UpdatedReplicas, want)
	}
	if st.Replicas > replicas {
		return waiting("Waiting for cloneset %q rollout to finish: %d old replicas are pending termination...\n", cs.Name, st.Replicas-replicas)
	}
	if st.UpdatedAvailableReplicas < want {
		return waiting("Waiting for cloneset %q rollout to finish: %d of %d updated replicas are available...\n", cs.Name, st.UpdatedAvailableReplicas, want)
	}
	if partition > 0 {
		return finished("partitioned roll out complete: %d new pods have been updated...\n", st.UpdatedReplicas)
	}
	return finished("cloneset %q successfully rolled out\n", cs.Name)
}

// statefulSetState words an Advanced StatefulSet's rollout as kubectl words a StatefulSet's:
// like kubectl, it reports a partitioned roll out whenever a partition is set, 0 included (the
// webhook defaults it to 0, as the apiserver does for a StatefulSet).
func statefulSetState(sts *appsv1beta1.StatefulSet) rolloutState {
	if t := sts.Spec.UpdateStrategy.Type; t != "" && t != appsv1.RollingUpdateStatefulSetStrategyType {
		return rolloutState{err: fmt.Errorf("rollout status is only available for %s strategy type", appsv1.RollingUpdateStatefulSetStrategyType)}
	}
	if sts.Status.ObservedGeneration == 0 || sts.Generation > sts.Status.ObservedGeneration {
		return waiting("Waiting for statefulset spec update to be observed...\n")
	}
	replicas := int32(1)
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	st := sts.Status
	if st.ReadyReplicas < replicas {
		return waiting("Waiting for %d pods to be ready...\n", replicas-st.ReadyReplicas)
	}
	if ru := sts.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		if want := replicas - *ru.Partition; st.UpdatedReplicas < want {
			return waiting("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...\n", st.UpdatedReplicas, want)
		}
		return finished("partitioned roll out complete: %d new pods have been updated...\n", st.UpdatedReplicas)
	}
	if st.UpdateRevision != st.CurrentRevision {
		return waiting("waiting for statefulset rolling update to complete %d pods at revision %s...\n", st.UpdatedReplicas, st.UpdateRevision)
	}
	return finished("statefulset rolling update complete %d pods at revision %s...\n", st.CurrentReplicas, st.CurrentRevision)
}

// daemonSetState words an Advanced DaemonSet's rollout as kubectl words a DaemonSet's, with a
// partition kept at the old revision as for the other kinds.
func daemonSetState(ds *appsv1alpha1.DaemonSet) rolloutState {
	if t := ds.Spec.UpdateStrategy.Type; t != "" && t != appsv1alpha1.RollingUpdateDaemonSetStrategyType {
		return rolloutState{err: fmt.Errorf("rollout status is only available for %s strategy type", appsv1alpha1.RollingUpdateDaemonSetStrategyType)}
	}
	if ds.Generation > ds.Status.ObservedGeneration {
		return waiting("Waiting for daemon set spec update to be observed...\n")
	}
	st := ds.Status
	var partition int32
	if ru := ds.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil && *ru.Partition > 0 {
		partition = min(*ru.Partition, st.DesiredNumberScheduled)
	}
	want := st.DesiredNumberScheduled - partition
	if st.UpdatedNumberScheduled < want {
		if partition > 0 {
			return waiting("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...\n", st.UpdatedNumberScheduled, want)
		}
		return waiting("Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...\n", ds.Name, st.UpdatedNumberScheduled, want)
	}
	if st.NumberAvailable < st.DesiredNumberScheduled {
		return waiting("Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...\n", ds.Name, st.NumberAvailable, st.DesiredNumberScheduled)
	}
	if partition > 0 {
		return finished("partitioned roll out complete: %d new pods have been updated...\n", st.UpdatedNumberScheduled)
	}
	return finished("daemon set %q successfully rolled out\n", ds.Name)
}
