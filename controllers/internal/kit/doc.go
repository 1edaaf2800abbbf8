// Package kit is what every controller's Reconcile shares, written once: the prologue that
// reads the root object (Object), the controller set-up (Setup, and SetupLate for a controller
// that watches kinds known only at run time through LateWatches), the status write (WriteStatus),
// the pass of a workload that owns pods and revisions (PodOwnerPass) and the helpers for a
// status's typed conditions (SetCondition, FindCondition, RemoveCondition). A kind package keeps only what is its own: its watches, its pass over a
// found object, and what its status holds. Watches enqueue through Map, All, SameKey and Events (OnUpdate filters updates); Tools is what a Reconciler takes from the manager.
//
// The prologue: the object is read from the cache; NotFound means it is gone, so what the kind
// kept for it (its expectations) is forgotten and the pass ends without error; any other read
// error is returned, wrapped. The object then goes on the logger under its UpperCamel kind
// ("CloneSet", klog.KObj(cs)), and that logger goes into the context. An object being deleted
// ends the pass unless the kind handles deletion (Deleting) or works on to the end (KeepDeleting).
//
// The status write's conflict policy, one for every kind: the status is written with an update
// of the status subresource, only when it changed, so the object's resourceVersion makes every
// write optimistic. A conflict is not an error: it means the pass worked from an object the cache
// had not yet replaced (most often before the controller's own last write arrived). The write is
// dropped, and the object is queued again after StaleRequeue so that a pass over the newer object
// writes the status; that does not rely on the newer object's watch event, which a kind's
// predicates may filter out. Any other failure is returned wrapped. After a write the object
// holds the new resourceVersion, for a kind that expects to see its own write to record.
//
// The logging rule of the controllers (see also controllers/doc.go): use the logger from the
// context (ctrl.LoggerFrom(ctx)); name objects with klog.KObj or klog.KRef under their
// UpperCamel kind ("CloneSet", "Pod", "NodeImage"); messages start with a capital letter and end
// without a period; V(2) for what a pass did, V(4) for tracing; returned errors are lower-case
// and wrapped with what was being done ("list pods: %w").
//
// It imports controller-runtime, apimachinery, controllers/setup and the internal expectations
// and ownedpods, and must not import any controller package (`controllers/...` other than
// `controllers/setup` and `controllers/internal/...`).
package kit
