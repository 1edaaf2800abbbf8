// Package podunavailablebudget proves PodUnavailableBudget against the real apiserver: the
// budget's status, the /validate-pod check of deletions, evictions and in-place updates, the
// related-pub annotation, and a CloneSet whose in-place update the budget limits. The manager
// runs in process with PodUnavailableBudgetUpdateGate on; the node simulator plays kubelet.
package podunavailablebudget
