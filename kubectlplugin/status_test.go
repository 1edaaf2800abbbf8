package kubectlplugin

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	build "github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

type wantState struct {
	Message string
	Done    bool
	Err     string
}

func gotState(st rolloutState) wantState {
	w := wantState{Message: st.message, Done: st.done}
	if st.err != nil {
		w.Err = st.err.Error()
	}
	return w
}

// observed is obj at generation gen with the status setStatus writes.
func observed[T client.Object](obj T, gen int64, setStatus func(T)) client.Object {
	obj.SetGeneration(gen)
	setStatus(obj)
	return obj
}

func cloneSet(replicas int32, partition *intstr.IntOrString, gen int64, st appsv1alpha1.CloneSetStatus) client.Object {
	b := build.CloneSet("web", "ns").Replicas(replicas)
	if partition != nil {
		b = b.Partition(*partition)
	}
	return observed(b.Obj(), gen, func(cs *appsv1alpha1.CloneSet) { cs.Status = st })
}

func statefulSet(replicas int32, partition *int32, gen int64, st appsv1beta1.StatefulSetStatus) client.Object {
	b := build.StatefulSet("db", "ns").Replicas(replicas)
	if partition != nil {
		b = b.Partition(*partition)
	}
	return observed(b.Obj(), gen, func(sts *appsv1beta1.StatefulSet) { sts.Status = st })
}

func daemonSet(partition int32, gen int64, st appsv1alpha1.DaemonSetStatus) client.Object {
	b := build.DaemonSet("agent", "ns")
	if partition > 0 {
		b = b.Partition(partition)
	}
	return observed(b.Obj(), gen, func(ds *appsv1alpha1.DaemonSet) { ds.Status = st })
}

func TestRolloutState(t *testing.T) {
	two := intstr.FromInt32(2)
	half := intstr.FromString("50%")
	onDelete := build.DaemonSet("agent", "ns").OnDelete().Obj()
	stsOnDelete := build.StatefulSet("db", "ns").Obj()
	stsOnDelete.Spec.UpdateStrategy.Type = "OnDelete"
	tests := map[string]struct {
		kind *kind
		obj  client.Object
		want wantState
	}{
		"a CloneSet whose new generation the controller has not seen waits for it": {
			kind: cloneSetKind(), obj: cloneSet(3, nil, 2, appsv1alpha1.CloneSetStatus{ObservedGeneration: 1}),
			want: wantState{Message: "Waiting for cloneset spec update to be observed...\n"},
		},
		"a CloneSet with pods still at the old revision counts the updated ones": {
			kind: cloneSetKind(), obj: cloneSet(3, nil, 2, appsv1alpha1.CloneSetStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 1}),
			want: wantState{Message: "Waiting for cloneset \"web\" rollout to finish: 1 out of 3 new replicas have been updated...\n"},
		},
		"a CloneSet with more pods than replicas waits for the old ones to go": {
			kind: cloneSetKind(), obj: cloneSet(3, nil, 2, appsv1alpha1.CloneSetStatus{ObservedGeneration: 2, Replicas: 4, UpdatedReplicas: 3}),
			want: wantState{Message: "Waiting for cloneset \"web\" rollout to finish: 1 old replicas are pending termination...\n"},
		},
		"a CloneSet whose updated pods are not all available waits for them": {
			kind: cloneSetKind(), obj: cloneSet(3, nil, 2, appsv1alpha1.CloneSetStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, UpdatedAvailableReplicas: 2}),
			want: wantState{Message: "Waiting for cloneset \"web\" rollout to finish: 2 of 3 updated replicas are available...\n"},
		},
		"a CloneSet with every pod updated and available has rolled out": {
			kind: cloneSetKind(), obj: cloneSet(3, nil, 2, appsv1alpha1.CloneSetStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, UpdatedAvailableReplicas: 3}),
			want: wantState{Message: "cloneset \"web\" successfully rolled out\n", Done: true},
		},
		"a CloneSet with a partition waits only for the pods above it": {
			kind: cloneSetKind(), obj: cloneSet(5, &two, 2, appsv1alpha1.CloneSetStatus{ObservedGeneration: 2, Replicas: 5, UpdatedReplicas: 1}),
			want: wantState{Message: "Waiting for partitioned roll out to finish: 1 out of 3 new pods have been updated...\n"},
		},
		"a CloneSet with a partition is complete once the pods above it are updated and available": {
			kind: cloneSetKind(), obj: cloneSet(5, &two, 2, appsv1alpha1.CloneSetStatus{ObservedGeneration: 2, Replicas: 5, UpdatedReplicas: 3, UpdatedAvailableReplicas: 3}),
			want: wantState{Message: "partitioned roll out complete: 3 new pods have been updated...\n", Done: true},
		},
		"a CloneSet partition given as a percentage is rounded up": {
			kind: cloneSetKind(), obj: cloneSet(5, &half, 2, appsv1alpha1.CloneSetStatus{ObservedGeneration: 2, Replicas: 5, UpdatedReplicas: 2, UpdatedAvailableReplicas: 2}),
			want: wantState{Message: "partitioned roll out complete: 2 new pods have been updated...\n", Done: true},
		},
		"an Advanced StatefulSet never observed waits for the controller": {
			kind: statefulSetKind(), obj: statefulSet(3, nil, 1, appsv1beta1.StatefulSetStatus{}),
			want: wantState{Message: "Waiting for statefulset spec update to be observed...\n"},
		},
		"an Advanced StatefulSet with pods not ready counts them": {
			kind: statefulSetKind(), obj: statefulSet(3, nil, 1, appsv1beta1.StatefulSetStatus{ObservedGeneration: 1, ReadyReplicas: 1}),
			want: wantState{Message: "Waiting for 2 pods to be ready...\n"},
		},
		"an Advanced StatefulSet between revisions names the new one": {
			kind: statefulSetKind(), obj: statefulSet(3, nil, 1, appsv1beta1.StatefulSetStatus{ObservedGeneration: 1, ReadyReplicas: 3, UpdatedReplicas: 1, CurrentRevision: "db-1", UpdateRevision: "db-2"}),
			want: wantState{Message: "waiting for statefulset rolling update to complete 1 pods at revision db-2...\n"},
		},
		"an Advanced StatefulSet at one revision is complete": {
			kind: statefulSetKind(), obj: statefulSet(3, nil, 1, appsv1beta1.StatefulSetStatus{ObservedGeneration: 1, ReadyReplicas: 3, UpdatedReplicas: 3, CurrentReplicas: 3, CurrentRevision: "db-2", UpdateRevision: "db-2"}),
			want: wantState{Message: "statefulset rolling update complete 3 pods at revision db-2...\n", Done: true},
		},
		"an Advanced StatefulSet with a partition waits for the pods above it": {
			kind: statefulSetKind(), obj: statefulSet(3, ptr.To[int32](1), 1, appsv1beta1.StatefulSetStatus{ObservedGeneration: 1, ReadyReplicas: 3, UpdatedReplicas: 1, CurrentRevision: "db-1", UpdateRevision: "db-2"}),
			want: wantState{Message: "Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated...\n"},
		},
		"an Advanced StatefulSet with a partition is complete once the pods above it are updated": {
			kind: statefulSetKind(), obj: statefulSet(3, ptr.To[int32](1), 1, appsv1beta1.StatefulSetStatus{ObservedGeneration: 1, ReadyReplicas: 3, UpdatedReplicas: 2, CurrentRevision: "db-1", UpdateRevision: "db-2"}),
			want: wantState{Message: "partitioned roll out complete: 2 new pods have been updated...\n", Done: true},
		},
		"an Advanced StatefulSet with a partition of 0, as defaulted, reports a partitioned roll out as kubectl does": {
			kind: statefulSetKind(), obj: statefulSet(3, ptr.To[int32](0), 1, appsv1beta1.StatefulSetStatus{ObservedGeneration: 1, ReadyReplicas: 3, UpdatedReplicas: 3, CurrentRevision: "db-2", UpdateRevision: "db-2"}),
			want: wantState{Message: "partitioned roll out complete: 3 new pods have been updated...\n", Done: true},
		},
		"an Advanced StatefulSet updated on delete has no rollout to follow": {
			kind: statefulSetKind(), obj: stsOnDelete,
			want: wantState{Err: "rollout status is only available for RollingUpdate strategy type"},
		},
		"an Advanced DaemonSet whose new generation is not seen waits for it": {
			kind: daemonSetKind(), obj: daemonSet(0, 2, appsv1alpha1.DaemonSetStatus{ObservedGeneration: 1}),
			want: wantState{Message: "Waiting for daemon set spec update to be observed...\n"},
		},
		"an Advanced DaemonSet with nodes at the old revision counts the updated ones": {
			kind: daemonSetKind(), obj: daemonSet(0, 2, appsv1alpha1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 4, UpdatedNumberScheduled: 1}),
			want: wantState{Message: "Waiting for daemon set \"agent\" rollout to finish: 1 out of 4 new pods have been updated...\n"},
		},
		"an Advanced DaemonSet with updated pods not available waits for them": {
			kind: daemonSetKind(), obj: daemonSet(0, 2, appsv1alpha1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 4, UpdatedNumberScheduled: 4, NumberAvailable: 3}),
			want: wantState{Message: "Waiting for daemon set \"agent\" rollout to finish: 3 of 4 updated pods are available...\n"},
		},
		"an Advanced DaemonSet updated and available everywhere has rolled out": {
			kind: daemonSetKind(), obj: daemonSet(0, 2, appsv1alpha1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 4, UpdatedNumberScheduled: 4, NumberAvailable: 4}),
			want: wantState{Message: "daemon set \"agent\" successfully rolled out\n", Done: true},
		},
		"an Advanced DaemonSet with a partition is complete once the nodes above it are updated": {
			kind: daemonSetKind(), obj: daemonSet(1, 2, appsv1alpha1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 4, UpdatedNumberScheduled: 3, NumberAvailable: 4}),
			want: wantState{Message: "partitioned roll out complete: 3 new pods have been updated...\n", Done: true},
		},
		"an Advanced DaemonSet updated on delete has no rollout to follow": {
			kind: daemonSetKind(), obj: onDelete,
			want: wantState{Err: "rollout status is only available for RollingUpdate strategy type"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, gotState(tc.kind.status(tc.obj))); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
		})
	}
}
