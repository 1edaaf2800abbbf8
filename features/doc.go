// Package features owns the feature gates of kruise-manager and kruise-daemon: the OpenKruise 1.8
// gate names with their 1.8 defaults, and the rules by which turning one gate off turns the
// gates that depend on it off too. There is no global gate: NewGate returns a fresh one, which
// cmd/ binds to --feature-gates and passes down. It imports only component-base's featuregate.
package features
