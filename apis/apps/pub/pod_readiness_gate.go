package pub

import corev1 "k8s.io/api/core/v1"

// KruisePodReadyConditionType is the readiness gate the controllers use to take a pod out of
// Service endpoints without killing it: for lifecycle hooks with markPodNotReady and for
// container recreation with unreadyGracePeriodSeconds.
const KruisePodReadyConditionType corev1.PodConditionType = "KruisePodReady"
