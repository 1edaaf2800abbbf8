package kit

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PatchLabel sets obj's label key to *value, or removes it when value is nil, with a JSON merge
// patch that touches nothing else (so it never conflicts); obj then holds the apiserver's answer.
func PatchLabel(ctx context.Context, c client.Writer, obj client.Object, key string, value *string) error {
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, metadataPatch("labels", key, value)))
}

// PatchAnnotation is PatchLabel for an annotation.
func PatchAnnotation(ctx context.Context, c client.Writer, obj client.Object, key string, value *string) error {
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, metadataPatch("annotations", key, value)))
}

// metadataPatch is the merge patch that sets metadata.<field>[key] to *value, or null.
func metadataPatch(field, key string, value *string) []byte {
	raw, err := json.Marshal(map[string]any{"metadata": map[string]any{field: map[string]*string{key: value}}})
	if err != nil {
		panic(fmt.Sprintf("encode a metadata patch: %v", err)) // strings always encode
	}
	return raw
}
