// Package cloneset holds the CloneSet admission handlers: defaulting (the defaults the CRD
// schema cannot express, such as the pod template's core defaults) and validation (the rules
// CEL cannot express: cross-field bounds scaled against replicas, podsToDelete naming pods of
// this CloneSet, which spec fields may change). Validation is a pure function over the objects
// plus the pods a handler has read; the handlers only decode, read and encode.
//
// It imports apis/, controllers/setup and features/; it must not import the manager, other
// webhook packages or any controller.
package cloneset
