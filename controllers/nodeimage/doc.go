// Package nodeimage owns the NodeImage controller: one NodeImage per Node, named after it,
// created once the Node is Ready, carrying a copy of the Node's labels (ImagePullJob label
// selectors match against them) and deleted with the Node. It also keeps NodeImage specs clean:
// tags whose owning ImagePullJobs are gone, and tags past their ttlSecondsAfterFinished, are
// dropped; a tag the daemon has not answered for a minute, or one past its
// activeDeadlineSeconds, is marked Failed in status.
//
// It imports apis/ and controllers/setup; it must not import the manager, webhooks or other
// controllers (`controllers/...` other than `controllers/setup` and `controllers/internal/...`).
package nodeimage
