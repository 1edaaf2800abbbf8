// Package protection tests deletion protection (the policy.kruise.io/delete-protection label)
// against a real kube-apiserver calling the manager's webhooks, registered as the chart
// registers them: Always and Cascading on Kubernetes' own kinds and on the add-on's.
package protection
