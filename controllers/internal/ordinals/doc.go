// Package ordinals is the arithmetic of a StatefulSet's ordinals: parsing spec.reserveOrdinals
// into merged spans, and the Set of ordinals the replicas take (the first replicas ordinals from
// a start that are not reserved). A Set is kept as its bounds and the reserved spans, never as a
// list of ordinals: every question (how many, where is ordinal o, which are the first n without
// a pod) costs at most the spans and the ordinals asked for, however large replicas is, so that a
// huge spec.replicas costs the manager nothing before its pods exist.
//
// The Advanced StatefulSet controller and webhook and the PersistentPodState controller use it.
// It imports only the API machinery and must not import a controller package
// (`controllers/...` other than `controllers/internal/...`).
package ordinals
