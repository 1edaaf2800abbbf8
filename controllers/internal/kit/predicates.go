package kit

import (
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// OnUpdate is the watch option that passes every creation, deletion and generic event, and the
// updates that changed says matter.
func OnUpdate(changed func(old, cur client.Object) bool) builder.Predicates {
	return builder.WithPredicates(onUpdate(changed))
}

func onUpdate(changed func(old, cur client.Object) bool) predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool { return changed(e.ObjectOld, e.ObjectNew) }}
}
