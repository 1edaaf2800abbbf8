// Package admission proves the CloneSet and pod admission handlers and the pod readiness
// controller through a real kube-apiserver: the handlers run behind a controller-runtime
// webhook server on loopback with a certificate made in TestMain, webhook configurations point
// the apiserver at it by URL, and every assertion reads the result back through the apiserver.
// The node simulator plays the kubelet, so readiness gates are honoured as a kubelet would.
//
// It may import the handlers and controllers it tests, apis/, features/ and test/framework; it
// must not import the manager (`controllers/manager`) directly, whose wiring has its own suite
// (harness, whose Main it shares, links the manager but starts none here).
package admission
