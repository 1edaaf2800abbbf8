package predownload

import (
	"k8s.io/component-base/featuregate"

	"github.com/kruise-addon/kruise-addon/features"
)

// Enabled reports whether workloads pull a new revision's images ahead of their in-place
// updates: kruise-daemon must run, and the PreDownloadImageForInPlaceUpdate feature be on.
func Enabled(gates featuregate.FeatureGate) bool {
	return gates.Enabled(features.KruiseDaemon) && gates.Enabled(features.PreDownloadImageForInPlaceUpdate)
}

// EnabledForDaemonSet reports whether Advanced DaemonSets pull a new revision's images ahead of
// their update: kruise-daemon must run, and the PreDownloadImageForDaemonSetUpdate feature be on.
func EnabledForDaemonSet(gates featuregate.FeatureGate) bool {
	return gates.Enabled(features.KruiseDaemon) && gates.Enabled(features.PreDownloadImageForDaemonSetUpdate)
}
