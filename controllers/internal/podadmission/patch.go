package podadmission

import (
	"maps"
	"reflect"
	"slices"
	"strings"

	"gomodules.xyz/jsonpatch/v2"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Patch is the JSON patch that turns a pod as admitted, before, into the pod the steps left,
// after, written from what changed rather than by encoding the whole pod and diffing it against
// the request: that re-encoding and diff were a fifth of /mutate-pod's CPU. A changed label or
// annotation is one operation on its key; any other changed field of metadata or spec is set
// whole (an "add", which replaces a member that is there), or removed when it is now empty and
// left out of JSON; a changed status, or metadata or spec that was empty (and so perhaps absent
// from the request), is set whole. Fields that did not change are not touched,
// so the patched pod is after, in JSON, wherever before came from the request.
func Patch(before, after *corev1.Pod) []jsonpatch.JsonPatchOperation {
	var ops []jsonpatch.JsonPatchOperation
	if b := reflect.ValueOf(&before.ObjectMeta).Elem(); b.IsZero() {
		// Empty before, so perhaps absent from the request: set whole.
		ops = wholePatch(ops, "/metadata", before.ObjectMeta, after.ObjectMeta)
	} else {
		ops = mapPatch(ops, "/metadata/labels", before.Labels, after.Labels)
		ops = mapPatch(ops, "/metadata/annotations", before.Annotations, after.Annotations)
		ops = fieldsPatch(ops, "/metadata", metaFields, b, reflect.ValueOf(&after.ObjectMeta).Elem(), "labels", "annotations")
	}
	if b := reflect.ValueOf(&before.Spec).Elem(); b.IsZero() {
		ops = wholePatch(ops, "/spec", before.Spec, after.Spec)
	} else {
		ops = fieldsPatch(ops, "/spec", specFields, b, reflect.ValueOf(&after.Spec).Elem())
	}
	return wholePatch(ops, "/status", before.Status, after.Status)
}

// wholePatch sets the value at path to after when it differs from before.
func wholePatch(ops []jsonpatch.JsonPatchOperation, path string, before, after any) []jsonpatch.JsonPatchOperation {
	if apiequality.Semantic.DeepEqual(before, after) {
		return ops
	}
	return append(ops, jsonpatch.NewOperation("add", path, after))
}

// mapPatch sets the keys of the map at path that changed from before to after and removes the
// ones after lacks; a map that was empty (and so may be absent from the request) is set whole.
func mapPatch(ops []jsonpatch.JsonPatchOperation, path string, before, after map[string]string) []jsonpatch.JsonPatchOperation {
	if len(before) == 0 {
		if len(after) > 0 {
			ops = append(ops, jsonpatch.NewOperation("add", path, after))
		}
		return ops
	}
	if len(after) == 0 {
		return append(ops, jsonpatch.NewOperation("remove", path, nil))
	}
	for _, k := range slices.Sorted(maps.Keys(after)) {
		if v, ok := before[k]; !ok || v != after[k] {
			ops = append(ops, jsonpatch.NewOperation("add", path+"/"+escape(k), after[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(before)) {
		if _, ok := after[k]; !ok {
			ops = append(ops, jsonpatch.NewOperation("remove", path+"/"+escape(k), nil))
		}
	}
	return ops
}

// fieldsPatch sets, under path, each of fields (the JSON fields of before's and after's type)
// that changed from before to after, skipping the fields named in skip.
func fieldsPatch(ops []jsonpatch.JsonPatchOperation, path string, fields []field, before, after reflect.Value, skip ...string) []jsonpatch.JsonPatchOperation {
	for _, f := range fields {
		name, omits := f.name, f.omits
		if slices.Contains(skip, name) {
			continue
		}
		b, a := before.Field(f.index), after.Field(f.index)
		if apiequality.Semantic.DeepEqual(b.Interface(), a.Interface()) {
			continue
		}
		if omits(a) {
			// It was set before (it changed, and a field left out is empty when decoded), so
			// it is in the request.
			ops = append(ops, jsonpatch.NewOperation("remove", path+"/"+escape(name), nil))
			continue
		}
		ops = append(ops, jsonpatch.NewOperation("add", path+"/"+escape(name), a.Interface()))
	}
	return ops
}

// field is one JSON field of a struct: its index, name and omitempty test.
type field struct {
	index int
	name  string
	omits func(reflect.Value) bool
}

// metaFields and specFields are the JSON fields of a pod's metadata and spec, read from their
// tags once rather than for every pod.
var (
	metaFields = jsonFieldsOf(reflect.TypeFor[metav1.ObjectMeta]())
	specFields = jsonFieldsOf(reflect.TypeFor[corev1.PodSpec]())
)

func jsonFieldsOf(t reflect.Type) []field {
	var fs []field
	for i := range t.NumField() {
		if name, omits := jsonField(t.Field(i)); name != "" {
			fs = append(fs, field{index: i, name: name, omits: omits})
		}
	}
	return fs
}

// jsonField is the JSON name of a struct field, "" for a field JSON does not encode, and what
// tells whether JSON leaves a value of it out (omitempty, omitzero).
func jsonField(f reflect.StructField) (name string, omits func(reflect.Value) bool) {
	tag := f.Tag.Get("json")
	if tag == "-" || !f.IsExported() {
		return "", nil
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	has := func(opt string) bool { return strings.Contains(","+opts+",", ","+opt+",") }
	omitEmpty, omitZero := has("omitempty"), has("omitzero")
	return name, func(v reflect.Value) bool { return omitZero && v.IsZero() || omitEmpty && empty(v) }
}

// empty is encoding/json's omitempty test.
func empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// escape makes a map key or field name one JSON pointer token (RFC 6901).
func escape(token string) string {
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}
