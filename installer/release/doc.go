// Package release owns the Helm side of the installer: the release storage of a namespace,
// opened once per command (store.go); the release's state, what each command does from it and
// what undoes a failed install or upgrade (decide.go); and one small function per Helm action
// that only turns the installer's options into action fields (actions.go); and the deletion of a
// release's objects only where they carry that release's Helm ownership, which its uninstall runs
// on (owned.go). No other package reads or writes releases. It must not collect facts or run
// preflight.
package release
