package inplaceupdate

import (
	"encoding/json"
	"fmt"
	"regexp"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubectl/pkg/util/qos"

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
	// ContainerResources maps container names to the cpu and memory requests and limits the
	// update changes, with their new values (the InPlaceWorkloadVerticalScaling gate).
	ContainerResources map[string]corev1.ResourceRequirements `json:"containerResources,omitempty"`
	// StaysInService is true for an update that only resizes containers none of which restarts
	// for it (no resizePolicy RestartContainer for a resource it changes): as in 1.8, the pod is
	// not taken out of service.
	StaysInService bool `json:"staysInService,omitempty"`
	// GraceSeconds is how long the pod stays not-ready before its images change.
	GraceSeconds int32 `json:"graceSeconds,omitempty"`
}

// Options change what Plan accepts.
type Options struct {
	// EnvFromMetadata allows a change of labels or annotations that containers read through env
	// fieldRefs to go in place (the InPlaceUpdateEnvFromMetadata feature gate).
	EnvFromMetadata bool
	// VerticalScaling allows a change of containers' cpu and memory requests and limits to go in
	// place (the InPlaceWorkloadVerticalScaling feature gate).
	VerticalScaling bool
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
// images (and, with Options.VerticalScaling, the values of containers' cpu and memory requests and
// limits, as long as the pod's QoS class stays), a change of metadata other than labels and
// annotations, or, without Options.EnvFromMetadata, a label or annotation that a container reads
// through its env.
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
		if opts.VerticalScaling {
			changed, ok := resized(os.Containers[i].Resources, ns.Containers[i].Resources)
			if !ok {
				return nil, false
			}
			if changed != nil {
				plan.ContainerResources = put(plan.ContainerResources, ns.Containers[i].Name, *changed)
				os.Containers[i].Resources = ns.Containers[i].Resources
			}
		}
	}
	if !equality.Semantic.DeepEqual(os, ns) {
		return nil, false
	}
	if len(plan.ContainerResources) > 0 {
		if qos.ComputePodQOS(&corev1.Pod{Spec: oldT.Spec}) != qos.ComputePodQOS(&corev1.Pod{Spec: newT.Spec}) {
			return nil, false
		}
		plan.StaysInService = len(plan.ContainerImages) == 0 && !restartsForResize(ns.Containers, plan.ContainerResources)
	}
	plan.Labels = diffStrings(oldT.Labels, newT.Labels)
	plan.Annotations = diffStrings(oldT.Annotations, newT.Annotations)
	if readsChangedMetadata(ns, plan) {
		if !opts.EnvFromMetadata {
			return nil, false
		}
		plan.UpdateEnvFromMetadata = true
		plan.ContainerRefMetadata = refMetadata(ns, plan)
		plan.StaysInService = false
	}
	return plan, true
}

// resizable are the resources a running container's requests and limits can change in place.
var resizable = map[corev1.ResourceName]bool{corev1.ResourceCPU: true, corev1.ResourceMemory: true}

// resized returns the requests and limits that differ between a container's old and new
// resources, with their new values (nil when none does), and false when the change cannot go
// in place: a request or limit added or removed, a resource other than cpu and memory changed,
// or a change of claims.
func resized(old, new corev1.ResourceRequirements) (*corev1.ResourceRequirements, bool) {
	if !equality.Semantic.DeepEqual(old.Claims, new.Claims) {
		return nil, false
	}
	requests, ok := changedValues(old.Requests, new.Requests)
	if !ok {
		return nil, false
	}
	limits, ok := changedValues(old.Limits, new.Limits)
	if !ok {
		return nil, false
	}
	if requests == nil && limits == nil {
		return nil, true
	}
	return &corev1.ResourceRequirements{Requests: requests, Limits: limits}, true
}

// changedValues returns the new values of the resources whose quantity differs between a and b,
// and false when a resource is in only one of them or is not resizable.
func changedValues(a, b corev1.ResourceList) (corev1.ResourceList, bool) {
	if len(a) != len(b) {
		return nil, false
	}
	var out corev1.ResourceList
	for k, nv := range b {
		ov, ok := a[k]
		if !ok {
			return nil, false
		}
		if ov.Cmp(nv) == 0 {
			continue
		}
		if !resizable[k] {
			return nil, false
		}
		out = put(out, k, nv)
	}
	return out, true
}

// restartsForResize tells whether a container restarts for the resize: its resizePolicy says
// RestartContainer for a resource whose request or limit the resize changes.
func restartsForResize(containers []corev1.Container, resources map[string]corev1.ResourceRequirements) bool {
	for _, c := range containers {
		r, ok := resources[c.Name]
		if !ok {
			continue
		}
		for _, p := range c.ResizePolicy {
			if p.RestartPolicy != corev1.RestartContainer {
				continue
			}
			_, inRequests := r.Requests[p.ResourceName]
			_, inLimits := r.Limits[p.ResourceName]
			if inRequests || inLimits {
				return true
			}
		}
	}
	return false
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
