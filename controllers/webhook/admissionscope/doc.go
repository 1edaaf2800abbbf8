// Package admissionscope holds the checks every namespaced admission handler makes on the request
// itself before it reads anything on the object's behalf. It is a leaf: it imports only
// apimachinery, so every kind's webhook package may use it.
package admissionscope
