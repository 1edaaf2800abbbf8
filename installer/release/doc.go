// Package release owns the Helm side of the installer: the release's state and what each
// command does from it (decide.go), and one small function per Helm action that only turns the
// installer's options into action fields (actions.go). It must not collect facts or run
// preflight.
package release
