package manager

import (
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Controllers lists every controller kruise-manager runs on the leader, by the name of its
// --<name>-workers flag.
func Controllers() []Component {
	return []Component{}
}

// WebhookSets lists every admission handler set kruise-manager serves.
func WebhookSets() []setup.Webhooks {
	return []setup.Webhooks{}
}
