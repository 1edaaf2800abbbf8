package inplaceupdate

import (
	"encoding/json"
	"fmt"
	"regexp"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/apis/apps/pub/envhash"
)

// Plan is what an in-place update changes on a pod.
type Plan struct {
	// Revision is the name of the revision the pod moves to.
	Revision string `json:"revision"`
	// ContainerImages maps container names to their new images.
	ContainerImages map[string]string `json:"containerImages,omitempty"`
	// Labels and Annotations are set on the pod; a nil value removes the key.
	Labels      map[string]*string `json:"labels,omitempty"`
	Annotations map[string]*string `json:"annotations,omitempty"`
	// UpdateEnvFromMetadata is true when a container reads a changed label or annotation through
	// an env fieldRef, so that container must restart to see it.
	UpdateEnvFromMetadata bool `json:"updateEnvFromMetadata,omitempty"`
	// ContainerRefMetadata maps a container name to the labels and annotations, with their new
	// values, that it reads through env and the update changes: with container launch priority
	// they are set in the batch of the first container that reads them.
	ContainerRefMetadata map[string]metav1.ObjectMeta `json:"containerRefMetadata,omitempty"`
	// GraceSeconds is how long the pod stays not-ready before its images change.
	GraceSeconds int32 `json:"graceSeconds,omitempty"`
}

// Options change what Plan accepts.
type Options struct {
	// EnvFromMetadata allows a change of labels or annotations that containers read through env
	// fieldRefs to go in place (the InPlaceUpdateEnvFromMetadata feature gate).
	EnvFromMetadata bool
	// GraceSeconds is copied into the plan.
	GraceSeconds int32
}

// TemplateFunc extracts the pod template a revision holds.
type TemplateFunc func(*appsv1.ControllerRevision) (*corev1.PodTemplateSpec, error)

// SpecTemplate reads revisions whose data is {"spec":{"template":{...}}}, the shape CloneSet,
// Advanced StatefulSet and Advanced DaemonSet revisions share.
func SpecTemplate(r *appsv1.ControllerRevision) (*corev1.PodTemplateSpec, error) {
	var data struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(r.Data.Raw, &data); err != nil {
		return nil, fmt.Errorf("decode revision %s: %w", r.Name, err)
	}
	return &data.Spec.Template, nil
}

// PlanUpdate decides whether a pod can move from oldRev to newRev in place and returns the plan.
// It returns false when the change needs a new pod: anything in the pod spec other than container
// images, a change of metadata other than labels and annotations, or, without
// Options.EnvFromMetadata, a label or annotation that a container reads through its env.
func PlanUpdate(oldRev, newRev *appsv1.ControllerRevision, read TemplateFunc, opts Options) (*Plan, bool, error) {
	oldT, err := read(oldRev)
	if err != nil {
		return nil, false, err
	}
	newT, err := read(newRev)
	if err != nil {
		return nil, false, err
	}
	plan, ok := planTemplates(oldT, newT, opts)
	if !ok {
		return nil, false, nil
	}
	plan.Revision = newRev.Name
	return plan, true, nil
}

func planTemplates(oldT, newT *corev1.PodTemplateSpec, opts Options) (*Plan, bool) {
	// Metadata other than labels and annotations cannot change on a running pod.
	om, nm := oldT.ObjectMeta.DeepCopy(), newT.ObjectMeta.DeepCopy()
	om.Labels, om.Annotations, nm.Labels, nm.Annotations = nil, nil, nil, nil
	if !equality.Semantic.DeepEqual(om, nm) {
		return nil, false
	}
	if len(oldT.Spec.Containers) != len(newT.Spec.Containers) {
		return nil, false
	}
	plan := &Plan{GraceSeconds: opts.GraceSeconds}
	os, ns := oldT.Spec.DeepCopy(), newT.Spec.DeepCopy()
	for i := range ns.Containers {
		if os.Containers[i].Name != ns.Containers[i].Name {
			return nil, false
		}
		if os.Containers[i].Image != ns.Containers[i].Image {
			if plan.ContainerImages == nil {
				plan.ContainerImages = map[string]string{}
			}
			plan.ContainerImages[ns.Containers[i].Name] = ns.Containers[i].Image
			os.Containers[i].Image = ns.Containers[i].Image
		}
	}
	if !equality.Semantic.DeepEqual(os, ns) {
		return nil, false
	}
	plan.Labels = diffStrings(oldT.Labels, newT.Labels)
	plan.Annotations = diffStrings(oldT.Annotations, newT.Annotations)
	if readsChangedMetadata(ns, plan) {
		if !opts.EnvFromMetadata {
			return nil, false
		}
		plan.UpdateEnvFromMetadata = true
		plan.ContainerRefMetadata = refMetadata(ns, plan)
	}
	return plan, true
}

// refMetadata maps each container to the labels and annotations it reads through env that the
// plan sets to a new value.
func refMetadata(spec *corev1.PodSpec, plan *Plan) map[string]metav1.ObjectMeta {
	out := map[string]metav1.ObjectMeta{}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		meta := metav1.ObjectMeta{}
		for _, r := range envhash.Refs(c) {
			if r.Source == envhash.Labels && plan.Labels[r.Key] != nil {
				meta.Labels = put(meta.Labels, r.Key, *plan.Labels[r.Key])
			}
			if r.Source == envhash.Annotations && plan.Annotations[r.Key] != nil {
				meta.Annotations = put(meta.Annotations, r.Key, *plan.Annotations[r.Key])
			}
		}
		if meta.Labels != nil || meta.Annotations != nil {
			out[c.Name] = meta
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// diffStrings returns the keys to set (new value) or remove (nil) to turn a into b.
func diffStrings(a, b map[string]string) map[string]*string {
	out := map[string]*string{}
	for k, v := range b {
		if old, ok := a[k]; !ok || old != v {
			v := v
			out[k] = &v
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			out[k] = nil
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

var metadataFieldRef = regexp.MustCompile(`^metadata\.(labels|annotations)\['(.+)'\]$`)

// readsChangedMetadata reports whether any container reads, through an env fieldRef, a label or
// annotation the plan changes.
func readsChangedMetadata(spec *corev1.PodSpec, plan *Plan) bool {
	for _, c := range spec.Containers {
		for _, e := range c.Env {
			if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil {
				continue
			}
			m := metadataFieldRef.FindStringSubmatch(e.ValueFrom.FieldRef.FieldPath)
			if m == nil {
				continue
			}
			changed := plan.Labels
			if m[1] == "annotations" {
				changed = plan.Annotations
			}
			if _, ok := changed[m[2]]; ok {
				return true
			}
		}
	}
	return false
}

// WithGrace is o with the grace period of a workload's inPlaceUpdateStrategy (none when nil).
func (o Options) WithGrace(s *appspub.InPlaceUpdateStrategy) Options {
	if s != nil {
		o.GraceSeconds = s.GracePeriodSeconds
	}
	return o
}
