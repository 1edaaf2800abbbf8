package spread

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// Injected is the value of the apps.kruise.io/matched-workloadspread annotation, JSON as 1.8
// writes it: {"name":<WorkloadSpread>,"subset":<subset>,"uid":<id>}. UID is set only when the pod
// had no name at admission (generateName): the subset's creatingPods then holds it instead.
type Injected struct {
	Name   string `json:"name"`
	Subset string `json:"subset"`
	UID    string `json:"uid,omitempty"`
}

// Encode returns the annotation value.
func (i Injected) Encode() string {
	b, _ := json.Marshal(i) // three strings cannot fail to marshal
	return string(b)
}

// InjectedOf reads the annotation of pod. ok is false when the pod has none; an annotation that
// does not parse is an error naming it.
func InjectedOf(pod *corev1.Pod) (Injected, bool, error) {
	v, ok := pod.Annotations[appsv1alpha1.MatchedWorkloadSpreadSubsetAnnotations]
	if !ok || v == "" {
		return Injected{}, false, nil
	}
	var in Injected
	if err := json.Unmarshal([]byte(v), &in); err != nil {
		return Injected{}, false, fmt.Errorf("annotation %s=%q: %w", appsv1alpha1.MatchedWorkloadSpreadSubsetAnnotations, v, err)
	}
	return in, true, nil
}

// Key is how a pod is named in creatingPods: the generated UID when there is one, else its name.
func (i Injected) Key(podName string) string {
	if i.UID != "" {
		return i.UID
	}
	return podName
}
