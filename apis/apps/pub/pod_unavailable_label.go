package pub

// PubUnavailablePodLabelPrefix starts a pod label that makes PodUnavailableBudget count the
// pod as unavailable, e.g. unavailable-pod.kruise.io/maintenance: "true".
const PubUnavailablePodLabelPrefix = "unavailable-pod.kruise.io/"
