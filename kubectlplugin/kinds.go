package kubectlplugin

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
)

// kind is what the commands need to know about one workload kind: its names, how to make an
// empty object, and where its template, pause switch, partition and replicas live.
type kind struct {
	// gvk is the kind the plugin reads and writes.
	gvk schema.GroupVersionKind
	// resource is the plural resource name.
	resource string
	// names are what users may type for it on the command line.
	names []string
	// noun is the kind as status lines name it ("cloneset", "statefulset", "daemon set").
	noun string

	newObject   func() client.Object
	template    func(client.Object) *corev1.PodTemplateSpec
	paused      func(client.Object) bool
	setPaused   func(client.Object, bool)
	partition   func(client.Object) string
	setReplicas func(client.Object, int32) // nil: the kind cannot be scaled
	selector    func(client.Object) map[string]string
	status      func(client.Object) rolloutState
}

// qualified is the kind as kubectl prints it before a name, e.g. "cloneset.apps.kruise.io".
func (k *kind) qualified() string {
	return strings.ToLower(k.gvk.Kind) + "." + k.gvk.Group
}

// kinds are the workloads the plugin serves.
func kinds() []*kind {
	return []*kind{cloneSetKind(), statefulSetKind(), daemonSetKind()}
}

// kindNames lists every accepted name, for error messages.
func kindNames() []string {
	var out []string
	for _, k := range kinds() {
		out = append(out, k.names...)
	}
	sort.Strings(out)
	return out
}

// lookupKind finds the kind a user typed.
func lookupKind(name string) (*kind, error) {
	n := strings.ToLower(name)
	for _, k := range kinds() {
		for _, alias := range k.names {
			if n == alias {
				return k, nil
			}
		}
	}
	return nil, fmt.Errorf("resource type %q is not supported: use one of %s", name, strings.Join(kindNames(), ", "))
}

// target is one workload named on the command line.
type target struct {
	kind *kind
	name string
}

// parseTargets turns "TYPE NAME..." or "TYPE/NAME..." into targets.
func parseTargets(args []string) ([]target, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("you must name a resource: TYPE NAME or TYPE/NAME, where TYPE is one of %s", strings.Join(kindNames(), ", "))
	}
	if strings.Contains(args[0], "/") {
		var out []target
		for _, a := range args {
			typ, name, ok := strings.Cut(a, "/")
			if !ok || typ == "" || name == "" {
				return nil, fmt.Errorf("argument %q: want TYPE/NAME when the first argument has that form", a)
			}
			k, err := lookupKind(typ)
			if err != nil {
				return nil, err
			}
			out = append(out, target{kind: k, name: name})
		}
		return out, nil
	}
	k, err := lookupKind(args[0])
	if err != nil {
		return nil, err
	}
	if len(args) == 1 {
		return nil, fmt.Errorf("you must name the %s: TYPE NAME or TYPE/NAME", k.resource)
	}
	var out []target
	for _, name := range args[1:] {
		if strings.Contains(name, "/") {
			return nil, fmt.Errorf("argument %q: there is no need to give a resource type as a separate argument when passing TYPE/NAME", name)
		}
		out = append(out, target{kind: k, name: name})
	}
	return out, nil
}

func cloneSetKind() *kind {
	cs := func(o client.Object) *appsv1alpha1.CloneSet { return o.(*appsv1alpha1.CloneSet) }
	return &kind{
		gvk:       appsv1alpha1.GroupVersion.WithKind("CloneSet"),
		resource:  "clonesets",
		names:     []string{"cloneset", "clonesets", "clone", "cloneset.apps.kruise.io", "clonesets.apps.kruise.io"},
		noun:      "cloneset",
		newObject: func() client.Object { return &appsv1alpha1.CloneSet{} },
		template:  func(o client.Object) *corev1.PodTemplateSpec { return &cs(o).Spec.Template },
		paused:    func(o client.Object) bool { return cs(o).Spec.UpdateStrategy.Paused },
		setPaused: func(o client.Object, p bool) { cs(o).Spec.UpdateStrategy.Paused = p },
		partition: func(o client.Object) string {
			if p := cs(o).Spec.UpdateStrategy.Partition; p != nil {
				return p.String()
			}
			return ""
		},
		setReplicas: func(o client.Object, n int32) { cs(o).Spec.Replicas = &n },
		selector:    func(o client.Object) map[string]string { return selectorLabels(cs(o).Spec.Selector.MatchLabels) },
		status:      func(o client.Object) rolloutState { return cloneSetState(cs(o)) },
	}
}

func statefulSetKind() *kind {
	sts := func(o client.Object) *appsv1beta1.StatefulSet { return o.(*appsv1beta1.StatefulSet) }
	return &kind{
		gvk:      appsv1beta1.GroupVersion.WithKind("StatefulSet"),
		resource: "statefulsets",
		names: []string{"statefulset", "statefulsets", "sts", "asts", "advancedstatefulset",
			"statefulset.apps.kruise.io", "statefulsets.apps.kruise.io"},
		noun:      "statefulset",
		newObject: func() client.Object { return &appsv1beta1.StatefulSet{} },
		template:  func(o client.Object) *corev1.PodTemplateSpec { return &sts(o).Spec.Template },
		paused: func(o client.Object) bool {
			ru := sts(o).Spec.UpdateStrategy.RollingUpdate
			return ru != nil && ru.Paused
		},
		setPaused: func(o client.Object, p bool) {
			s := sts(o)
			if s.Spec.UpdateStrategy.RollingUpdate == nil {
				s.Spec.UpdateStrategy.RollingUpdate = &appsv1beta1.RollingUpdateStatefulSetStrategy{}
			}
			s.Spec.UpdateStrategy.RollingUpdate.Paused = p
		},
		partition: func(o client.Object) string {
			if ru := sts(o).Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
				return fmt.Sprint(*ru.Partition)
			}
			return ""
		},
		setReplicas: func(o client.Object, n int32) { sts(o).Spec.Replicas = &n },
		selector: func(o client.Object) map[string]string {
			if s := sts(o).Spec.Selector; s != nil {
				return selectorLabels(s.MatchLabels)
			}
			return nil
		},
		status: func(o client.Object) rolloutState { return statefulSetState(sts(o)) },
	}
}

func daemonSetKind() *kind {
	ds := func(o client.Object) *appsv1alpha1.DaemonSet { return o.(*appsv1alpha1.DaemonSet) }
	return &kind{
		gvk:       appsv1alpha1.GroupVersion.WithKind("DaemonSet"),
		resource:  "daemonsets",
		names:     []string{"daemonset", "daemonsets", "daemon", "ads", "daemonset.apps.kruise.io", "daemonsets.apps.kruise.io"},
		noun:      "daemon set",
		newObject: func() client.Object { return &appsv1alpha1.DaemonSet{} },
		template:  func(o client.Object) *corev1.PodTemplateSpec { return &ds(o).Spec.Template },
		paused: func(o client.Object) bool {
			ru := ds(o).Spec.UpdateStrategy.RollingUpdate
			return ru != nil && ru.Paused != nil && *ru.Paused
		},
		setPaused: func(o client.Object, p bool) {
			d := ds(o)
			if d.Spec.UpdateStrategy.RollingUpdate == nil {
				d.Spec.UpdateStrategy.RollingUpdate = &appsv1alpha1.RollingUpdateDaemonSet{}
			}
			d.Spec.UpdateStrategy.RollingUpdate.Paused = &p
		},
		partition: func(o client.Object) string {
			if ru := ds(o).Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
				return fmt.Sprint(*ru.Partition)
			}
			return ""
		},
		selector: func(o client.Object) map[string]string {
			if s := ds(o).Spec.Selector; s != nil {
				return selectorLabels(s.MatchLabels)
			}
			return nil
		},
		status: func(o client.Object) rolloutState { return daemonSetState(ds(o)) },
	}
}

func selectorLabels(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// scaledPartition resolves a CloneSet partition (a count or a percentage of replicas, rounded
// up) to a count.
func scaledPartition(p *intstr.IntOrString, replicas int32) int32 {
	if p == nil {
		return 0
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(p, int(replicas), true)
	if err != nil || n < 0 {
		return 0
	}
	if int32(n) > replicas {
		return replicas
	}
	return int32(n)
}
