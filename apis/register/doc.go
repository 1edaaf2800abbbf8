// Package register makes what every API version package of the add-on declares to register its
// kinds: its group and version, and the scheme builder its types add themselves to.
//
// It is a leaf: it imports only k8s.io/apimachinery and controller-runtime's scheme package, and
// must not import any other package of the add-on (`...`).
package register
