// Package groupcommit writes the status changes that many callers make to one object at once
// (pod admissions recording into a WorkloadSpread or taking room from a PodUnavailableBudget) as
// a group: while one status write of the object is in flight, the changes that arrive queue up,
// and the next writer applies all of them, in the order they arrived, each to what the ones
// before it left, and writes them in one status update. A burst of admissions then costs a few
// writes, not one per caller waiting behind the one before, and every change is still decided
// on the state the earlier ones left, so no limit is ever overrun.
//
// A change that fails, or that changes nothing, is rolled back before the next change of its
// group sees the object, and only its own caller gets its error. The write is optimistic: it
// carries the resourceVersion it read and, on a conflict with another writer (a controller,
// another replica), the whole group is applied again to a fresh copy read from the apiserver.
// A failed read fails every change of the group, a failed write only the changes it carried.
// Between writes the object is read from the cache, or from the last copy this process wrote
// when the cache has not caught up with it yet. Nothing is kept for an object no caller is
// writing: its queue goes with its last caller, and its last written copy once the cache shows
// it (or, for an object never read again, a minute later).
//
// It imports controller-runtime's client, apimachinery, client-go and
// controllers/internal/expectations (which compares resourceVersions); it must not import the
// API types or any other controller package (`apis/...`, `controllers/...` other than
// `controllers/internal/expectations`).
package groupcommit
