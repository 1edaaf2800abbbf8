// Package broadcastjob holds the BroadcastJob admission handlers: defaulting (completion policy
// Always, failure policy FailFast, parallelism unbounded, the pod's restartPolicy OnFailure, and,
// unless TemplateNoDefaults is on, the core pod defaults in the template on create and on a
// template change, as 1.8 sets them) and validation (the job's name, the completion policy's fields
// that only type Always takes, parallelism, restartLimit, the pod's restartPolicy, the labels the
// controller reserves, and the template's containers). Validation is a pure function over the
// object; the admission kit (controllers/webhook/admit) decodes and answers.
//
// It imports apis/, controllers/setup, the admission kit, the podtemplate leaf (the pod template
// checks it shares with AdvancedCronJob), the coredefaults leaf and the fieldrule leaf; it must not
// import the manager, other webhook packages or any controller (`controllers/...` other than
// `controllers/setup`, `controllers/webhook/podtemplate`, `controllers/webhook/coredefaults`,
// `controllers/webhook/fieldrule`, the kit `controllers/webhook/admit` and the deletion guard it
// holds, `controllers/webhook/deletionprotection`).
package broadcastjob
