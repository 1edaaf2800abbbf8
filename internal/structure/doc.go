// Package structure checks the import promises every doc.go makes: TestDocPromisesHold reads
// them all and fails on each one the module's import graph breaks.
//
// A promise is written into the package comment's prose, so it stays readable:
//
//	It imports apis/ and controllers/setup; it must not import the manager or another kind's
//	package (`controllers/...` other than `controllers/setup` and `controllers/internal/...`).
//
// The grammar, kept small on purpose:
//
//   - A promise runs from the words "must not import" to the end of their clause: the first '.',
//     ';' or ':' outside backquotes that ends the comment or is followed by a space.
//   - Each backquoted span in the clause is a pattern of forbidden packages; the patterns after
//     the words "other than" are exceptions to all of them.
//   - A pattern is a package path relative to the module (`controllers/manager`), or an import
//     path when its first element holds a dot (`helm.sh/helm/v3/pkg/action`). A trailing "/..."
//     takes the package and every package below it (`controllers/webhook/...`); `...` alone is
//     the whole module.
//   - The package breaks the promise when it imports, directly or through any chain of imports,
//     a package that a pattern matches and no exception does. When the clause says "directly",
//     only the package's own imports count.
//   - Test files do not count, except in a test suite, a package whose only other file is
//     doc.go: its tests are all it has.
//   - Words in double quotes are quoted, and code blocks are examples: neither promises anything.
//
// The check also fails when a promise names no pattern, when a pattern matches no package the
// module builds (a typo would otherwise make it hold for ever), and when a doc.go promises in
// other words ("never imports", "imports no"), which it would not read.
//
// It reads the module through the go command and must not import any package of the add-on
// (`...`).
package structure
