// Package podcreate holds what every workload that creates pods shares about bounding creation:
// the slow-start batch sizes and the check, made between batches, that the workload still wants
// the pods planned for it. It is pure; the controllers do the API calls.
//
// It imports only apimachinery; it must not import a controller package.
package podcreate
