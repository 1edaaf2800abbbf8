// Package await bounds a read that takes no context (Helm's release storage, discovery) by a
// context: the installer's commands return once their context ends, even from such a read.
// It must not import `installer` or `installer/release`, which call it.
package await
