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
	return PatchMetadata(ctx, c, obj, map[string]*string{key: value}, nil)
}

// PatchAnnotation is PatchLabel for an annotation.
func PatchAnnotation(ctx context.Context, c client.Writer, obj client.Object, key string, value *string) error {
	return PatchMetadata(ctx, c, obj, nil, map[string]*string{key: value})
}

// PatchMetadata is PatchLabel for several labels and annotations at once, in one patch.
func PatchMetadata(ctx context.Context, c client.Writer, obj client.Object, labels, annotations map[string]*string) error {
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, metadataPatch(labels, annotations)))
}

// metadataPatch is the merge patch that sets each metadata.labels and metadata.annotations key
// given to its value, or null.
func metadataPatch(labels, annotations map[string]*string) []byte {
	meta := map[string]any{}
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	raw, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		panic(fmt.Sprintf("encode a metadata patch: %v", err)) // strings always encode
	}
	return raw
}
