package builder

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Meta holds the metadata setters the builders share; each returns the builder B it is part of,
// for chaining.
type Meta[B any] struct {
	obj     *metav1.ObjectMeta
	builder B
}

// GenerateName asks the apiserver to name the object from prefix; the name is cleared.
func (m Meta[B]) GenerateName(prefix string) B {
	m.obj.Name, m.obj.GenerateName = "", prefix
	return m.builder
}

// Label sets one label.
func (m Meta[B]) Label(key, value string) B {
	return m.set(&m.obj.Labels, map[string]string{key: value})
}

// Labels sets each of the labels, keeping others.
func (m Meta[B]) Labels(labels map[string]string) B { return m.set(&m.obj.Labels, labels) }

// Annotation sets one annotation.
func (m Meta[B]) Annotation(key, value string) B {
	return m.set(&m.obj.Annotations, map[string]string{key: value})
}

// Annotations sets each of the annotations, keeping others.
func (m Meta[B]) Annotations(annotations map[string]string) B {
	return m.set(&m.obj.Annotations, annotations)
}

// set merges entries into the map at field and returns the builder.
func (m Meta[B]) set(field *map[string]string, entries map[string]string) B {
	*field = merge(*field, entries)
	return m.builder
}

// setKey sets m[k] = v, allocating m when needed.
func setKey(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// merge copies every entry of from into m, allocating m when needed; from stays the caller's.
func merge(m, from map[string]string) map[string]string {
	for k, v := range from {
		m = setKey(m, k, v)
	}
	return m
}

// setOrAppend applies set to the first element of list that match accepts, or appends add
// when none does, and returns the list.
func setOrAppend[T any](list []T, match func(*T) bool, set func(*T), add T) []T {
	for i := range list {
		if match(&list[i]) {
			set(&list[i])
			return list
		}
	}
	return append(list, add)
}
