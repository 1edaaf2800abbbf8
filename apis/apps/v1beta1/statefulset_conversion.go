package v1beta1

// Hub marks v1beta1, the stored version, as the version every other version of Advanced
// StatefulSet converts through, for the CRD's /convert webhook.
func (*StatefulSet) Hub() {}
