package builder

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HPA is a HorizontalPodAutoscaler named name scaling the object of apiVersion and kind of the
// same name between minReplicas and maxReplicas, with no metric: with no metrics server the
// HPA controller still holds the target at minReplicas.
func HPA(name, namespace, apiVersion, kind string, minReplicas, maxReplicas int32) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: apiVersion, Kind: kind, Name: name},
			MinReplicas:    &minReplicas,
			MaxReplicas:    maxReplicas,
		},
	}
}
