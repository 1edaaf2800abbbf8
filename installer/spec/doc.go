// Package spec owns the manager's size presets (small, large, custom): their replicas, resources
// and disruption budget, their validation, the preset recommended for a node count and the
// warnings a choice deserves. It turns a Spec into chart values. It must not import Helm
// (`helm.sh/...`) or any cluster client (`k8s.io/client-go/...`,
// `sigs.k8s.io/controller-runtime/...`).
package spec
