// Package advancedcronjob serves the AdvancedCronJob validating webhook at 1.8's path
// /validate-apps-kruise-io-v1alpha1-advancedcronjob. It checks what the CRD's schema cannot: the
// cron schedule parses, the time zone exists, exactly one template is set, and the pod template of
// a jobTemplate or broadcastJobTemplate is one a job can run. On update it refuses, as 1.8 does,
// changes to anything but the schedule, time zone, concurrency policy, history limits, starting
// deadline and paused. Validation is a pure function over the object; the admission kit
// (controllers/webhook/admit) decodes and answers.
//
// There is no defaulting webhook: the CRD's schema defaults concurrencyPolicy, paused and the
// two history limits, and the jobs made from the template get their pod defaults when they are
// created.
//
// It imports apis/, controllers/setup, the admission kit and the podtemplate and fieldrule
// leaves; it must not import the manager, other webhook packages or any controller
// (`controllers/...` other than `controllers/setup`, `controllers/webhook/podtemplate`,
// `controllers/webhook/fieldrule`, the kit `controllers/webhook/admit`
// and the deletion guard it holds, `controllers/webhook/deletionprotection`).
package advancedcronjob
