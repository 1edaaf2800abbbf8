//go:build tools

// Package tools pins the etcd server module; its root package is etcd's main.
package tools

import _ "go.etcd.io/etcd/server/v3"
