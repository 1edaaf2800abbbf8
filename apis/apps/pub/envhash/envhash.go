package envhash

import (
	"encoding/json"
	"hash/fnv"
	"regexp"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Source says where in the pod's metadata an env var takes its value from.
type Source string

// The two sources an env var can read from pod metadata and have change under a running pod.
const (
	Labels      Source = "labels"
	Annotations Source = "annotations"
)

// Ref is one env var a container fills from a pod label or annotation.
type Ref struct {
	// Name is the env var's name.
	Name string
	// Source and Key name the label or annotation.
	Source Source
	Key    string
}

// excluded names env vars that SidecarSet injects from annotations of its own; a change of
// them never asks for a restart.
var excluded = map[string]bool{"SIDECARSET_VERSION": true, "SIDECARSET_VERSION_ALT": true}

var metadataFieldRef = regexp.MustCompile(`^metadata\.(labels|annotations)\['(.+)'\]$`)

// Refs lists the env vars of c whose value comes from a pod label or annotation, in spec order.
// A literal value wins over valueFrom in the kubelet, so such vars are left out.
func Refs(c *corev1.Container) []Ref {
	var out []Ref
	for _, e := range c.Env {
		if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || excluded[e.Name] {
			continue
		}
		m := metadataFieldRef.FindStringSubmatch(e.ValueFrom.FieldRef.FieldPath)
		if m == nil {
			continue
		}
		out = append(out, Ref{Name: e.Name, Source: Source(m[1]), Key: m[2]})
	}
	return out
}

// Expected is the hash c's env would have if the container were started now, with the pod
// metadata meta: what the manager waits for.
func Expected(c *corev1.Container, meta metav1.Object) uint64 {
	refs := Refs(c)
	vars := make([]envVar, 0, len(refs))
	for _, r := range refs {
		m := meta.GetLabels()
		if r.Source == Annotations {
			m = meta.GetAnnotations()
		}
		vars = append(vars, envVar{Name: r.Name, Value: m[r.Key]})
	}
	return hash(vars)
}

// Current is the hash of the env a running container of c has; lookup returns the value of one
// of its env vars (a var the container lacks counts as empty, as the kubelet sets a missing
// label's var to ""). lookup is called only when c reads pod metadata at all, so that a
// container that does not is never asked for its env.
func Current(c *corev1.Container, lookup func(name string) (string, error)) (uint64, error) {
	refs := Refs(c)
	vars := make([]envVar, 0, len(refs))
	for _, r := range refs {
		v, err := lookup(r.Name)
		if err != nil {
			return 0, err
		}
		vars = append(vars, envVar{Name: r.Name, Value: v})
	}
	return hash(vars), nil
}

type envVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// hash is FNV-64a over the vars sorted by name, in JSON so that no two lists collide by
// concatenation. It is never 0: the annotation uses 0 for "not recorded".
func hash(vars []envVar) uint64 {
	sort.SliceStable(vars, func(i, j int) bool { return vars[i].Name < vars[j].Name })
	raw, _ := json.Marshal(vars) // a slice of string pairs always encodes
	h := fnv.New64a()
	_, _ = h.Write(raw)
	if s := h.Sum64(); s != 0 {
		return s
	}
	return 1
}
