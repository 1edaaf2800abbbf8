package inject

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podadmission"
)

// UpgradeSpec is one SidecarSet's entry in a pod's kruise.io/sidecarset-hash (and
// -hash-without-image) annotation, a JSON object keyed by SidecarSet name.
type UpgradeSpec struct {
	// UpdateTimestamp is when the pod got this hash, at injection or at an in-place update.
	UpdateTimestamp metav1.Time `json:"updateTimestamp"`
	// Hash is the SidecarSet revision hash the pod's sidecars run.
	Hash string `json:"hash"`
	// SidecarSetName names the SidecarSet.
	SidecarSetName string `json:"sidecarSetName"`
	// SidecarList names the sidecar containers the SidecarSet put in the pod.
	SidecarList []string `json:"sidecarList"`
	// ControllerRevision names the SidecarSet's ControllerRevision the pod runs, when known.
	ControllerRevision string `json:"controllerRevision,omitempty"`
}

// ReadUpgradeSpecs decodes a pod's hash annotation (key is SidecarSetHashAnnotation or
// SidecarSetHashWithoutImageAnnotation). Pods injected by old releases hold a plain
// name-to-hash map, which is read too. A missing annotation gives an empty map.
func ReadUpgradeSpecs(pod metav1.Object, key string) (map[string]UpgradeSpec, error) {
	out := map[string]UpgradeSpec{}
	raw := pod.GetAnnotations()[key]
	if raw == "" {
		return out, nil
	}
	if err := json.Unmarshal([]byte(raw), &out); err == nil {
		return out, nil
	}
	old := map[string]string{}
	if err := json.Unmarshal([]byte(raw), &old); err != nil {
		return nil, fmt.Errorf("pod annotation %s is neither a SidecarSet hash map nor a name-to-hash map: %w", key, err)
	}
	out = map[string]UpgradeSpec{}
	for name, h := range old {
		out[name] = UpgradeSpec{Hash: h, SidecarSetName: name}
	}
	return out, nil
}

// PodHash returns the hash the pod records for the SidecarSet name under key ("" if none, or
// if the annotation cannot be read).
func PodHash(pod metav1.Object, name, key string) string {
	specs, err := ReadUpgradeSpecs(pod, key)
	if err != nil {
		return ""
	}
	return specs[name].Hash
}

// WriteUpgradeSpec sets the SidecarSet's entry in the pod's annotation key.
func WriteUpgradeSpec(pod *corev1.Pod, key string, spec UpgradeSpec) error {
	specs, err := ReadUpgradeSpecs(pod, key)
	if err != nil {
		return err
	}
	specs[spec.SidecarSetName] = spec
	return podadmission.AnnotateJSON(pod, key, specs)
}

// InjectedList returns the SidecarSet names in the pod's kruise.io/sidecarset-injected-list.
func InjectedList(pod metav1.Object) []string {
	raw := pod.GetAnnotations()[appsv1alpha1.SidecarSetListAnnotation]
	if raw == "" {
		return nil
	}
	return strings.Split(raw, ",")
}

// WorkingHotUpgrade returns the pod's kruise.io/sidecarset-working-hotupgrade-container map,
// sidecar name to the container of its pair that serves.
func WorkingHotUpgrade(pod metav1.Object) map[string]string {
	out := map[string]string{}
	if raw := pod.GetAnnotations()[appsv1alpha1.SidecarSetWorkingHotUpgradeContainer]; raw != "" {
		_ = json.Unmarshal([]byte(raw), &out)
	}
	return out
}

// HotUpgradeNames returns the names of the two containers of a hot-upgrade sidecar.
func HotUpgradeNames(sidecar string) (string, string) {
	return sidecar + "-1", sidecar + "-2"
}
