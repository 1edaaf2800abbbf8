// Package containerrecreaterequest owns the ContainerRecreateRequest admission webhook. On
// create it checks the request against the 1.8 rules, defaults the strategy and fills in, from
// the target pod, the node, pod-name, pod-uid and active labels and each container's preStop
// hook, ports and statusContext; on update it keeps the spec (but spec.containers), those
// labels and the unready-acquired annotation immutable. It reads the target pod only in the
// namespace the admission request names, and refuses an object that names another.
//
// It imports apis/, features, controllers/setup and the admission kit (controllers/webhook/admit);
// it must not import controllers or the manager (`controllers/...` other than `controllers/setup`
// and `controllers/webhook/...`).
package containerrecreaterequest
