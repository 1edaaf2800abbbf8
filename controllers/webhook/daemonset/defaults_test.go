package daemonset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

func TestSetDefaults(t *testing.T) {
	n := func(v int32) *intstr.IntOrString { return ptr.To(intstr.FromInt32(v)) }
	rolling := func(ru appsv1alpha1.RollingUpdateDaemonSet) appsv1alpha1.DaemonSetUpdateStrategy {
		return appsv1alpha1.DaemonSetUpdateStrategy{Type: appsv1alpha1.RollingUpdateDaemonSetStrategyType, RollingUpdate: &ru}
	}
	tests := []struct {
		name string
		in   appsv1alpha1.DaemonSetSpec
		want appsv1alpha1.DaemonSetSpec
	}{
		{
			name: "an empty spec gets a one-node-at-a-time Standard rolling update, burstReplicas 250 and ten revisions",
			in:   appsv1alpha1.DaemonSetSpec{},
			want: defaultedWith(rolling(appsv1alpha1.RollingUpdateDaemonSet{
				Type: appsv1alpha1.StandardRollingUpdateType, MaxUnavailable: n(1), MaxSurge: n(0), Partition: ptr.To[int32](0),
			})),
		},
		{
			name: "the deprecated Surging type becomes Standard with a surge of one and none unavailable",
			in:   appsv1alpha1.DaemonSetSpec{UpdateStrategy: rolling(appsv1alpha1.RollingUpdateDaemonSet{Type: appsv1alpha1.DeprecatedSurgingRollingUpdateType})},
			want: defaultedWith(rolling(appsv1alpha1.RollingUpdateDaemonSet{
				Type: appsv1alpha1.StandardRollingUpdateType, MaxUnavailable: n(0), MaxSurge: n(1), Partition: ptr.To[int32](0),
			})),
		},
		{
			name: "a surge the user sets is not joined by a default maxUnavailable",
			in:   appsv1alpha1.DaemonSetSpec{UpdateStrategy: rolling(appsv1alpha1.RollingUpdateDaemonSet{MaxSurge: n(2)})},
			want: defaultedWith(rolling(appsv1alpha1.RollingUpdateDaemonSet{
				Type: appsv1alpha1.StandardRollingUpdateType, MaxSurge: n(2), Partition: ptr.To[int32](0),
			})),
		},
		{
			name: "OnDelete gets no rolling update",
			in:   appsv1alpha1.DaemonSetSpec{UpdateStrategy: appsv1alpha1.DaemonSetUpdateStrategy{Type: appsv1alpha1.OnDeleteDaemonSetStrategyType}},
			want: defaultedWith(appsv1alpha1.DaemonSetUpdateStrategy{Type: appsv1alpha1.OnDeleteDaemonSetStrategyType}),
		},
		{
			name: "values the user set are kept",
			in:   userValues(),
			want: userValues(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := &appsv1alpha1.DaemonSet{Spec: tt.in}
			setDefaults(ds)
			if diff := cmp.Diff(tt.want, ds.Spec); diff != "" {
				t.Errorf("defaults (-want +got):\n%s", diff)
			}
		})
	}
}

// defaultedWith is the spec an empty one defaults to, but for its update strategy us.
func defaultedWith(us appsv1alpha1.DaemonSetUpdateStrategy) appsv1alpha1.DaemonSetSpec {
	return appsv1alpha1.DaemonSetSpec{BurstReplicas: ptr.To(intstr.FromInt32(250)), RevisionHistoryLimit: ptr.To[int32](10), UpdateStrategy: us}
}

// userValues is a spec whose every defaulted field the user set, to other values than the
// defaults.
func userValues() appsv1alpha1.DaemonSetSpec {
	return appsv1alpha1.DaemonSetSpec{
		BurstReplicas: ptr.To(intstr.FromString("10%")), RevisionHistoryLimit: ptr.To[int32](3),
		UpdateStrategy: appsv1alpha1.DaemonSetUpdateStrategy{
			Type:          appsv1alpha1.RollingUpdateDaemonSetStrategyType,
			RollingUpdate: &appsv1alpha1.RollingUpdateDaemonSet{Type: appsv1alpha1.InplaceRollingUpdateType, MaxUnavailable: ptr.To(intstr.FromString("20%")), Partition: ptr.To[int32](4), Paused: ptr.To(true)},
		},
	}
}
