package inject

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

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
	specs, err := decodeUpgradeSpecs(pod.GetAnnotations()[key])
	if err != nil {
		return nil, fmt.Errorf("pod annotation %s %w", key, err)
	}
	return specs, nil
}

func decodeUpgradeSpecs(raw string) (map[string]UpgradeSpec, error) {
	out := map[string]UpgradeSpec{}
	if raw == "" {
		return out, nil
	}
	if err := json.Unmarshal([]byte(raw), &out); err == nil {
		return out, nil
	}
	old := map[string]string{}
	if err := json.Unmarshal([]byte(raw), &old); err != nil {
		return nil, fmt.Errorf("is neither a SidecarSet hash map nor a name-to-hash map: %w", err)
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
	return podHashes.hash(pod.GetAnnotations()[key], name)
}

// podHashes remembers the hashes decoded from recent annotation values. A SidecarSet's
// reconcile reads the annotation of every pod it selects, and pods injected at one revision
// within one second carry the same value, so most reads skip decoding JSON. It holds at most
// podHashesMax values (it starts over when full) and only the name-to-hash part of each.
var podHashes = &hashMemo{m: map[string]map[string]string{}}

const podHashesMax = 1024

type hashMemo struct {
	mu sync.Mutex
	m  map[string]map[string]string
}

func (c *hashMemo) hash(raw, name string) string {
	if raw == "" {
		return ""
	}
	c.mu.Lock()
	hashes, ok := c.m[raw]
	c.mu.Unlock()
	if !ok {
		specs, err := decodeUpgradeSpecs(raw)
		if err != nil {
			return ""
		}
		hashes = make(map[string]string, len(specs))
		for n, s := range specs {
			hashes[n] = s.Hash
		}
		c.mu.Lock()
		if len(c.m) >= podHashesMax {
			clear(c.m)
		}
		c.m[raw] = hashes
		c.mu.Unlock()
	}
	return hashes[name]
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
