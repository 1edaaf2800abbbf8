// Package builder builds test objects with fluent setters, so that a test states only what it
// is about: builder.Pod("web-0", ns).Label("app", "web").Image("nginx:1").Obj().
//
// It owns the builders of built-in kinds (pods, nodes, namespaces). Each kind has its own file
// with the same shape, which builders for the add-on's kinds follow:
//
//   - a constructor named after the kind that returns a valid, minimal object;
//   - setters that change one thing and return the builder, so calls chain;
//   - Obj, which returns a deep copy, so one builder can stamp out several objects.
//
// HPA is a HorizontalPodAutoscaler over a workload's scale subresource.
//
// Builders hold no references to what they were given: maps and slices are copied in.
// The package must not import the framework (`test/framework`) or anything that talks to a
// cluster (`k8s.io/client-go/...`, `sigs.k8s.io/controller-runtime/...`).
package builder
