// Package advancedcronjob serves the AdvancedCronJob webhooks at 1.8's paths
// /mutate- and /validate-apps-kruise-io-v1alpha1-advancedcronjob. Validation checks what the CRD's schema cannot: the
// cron schedule parses, the time zone exists, exactly one template is set, and the pod template of
// a jobTemplate or broadcastJobTemplate is one a job can run. On update it refuses, as 1.8 does,
// changes to anything but the schedule, time zone, concurrency policy, history limits, starting
// deadline and paused. Validation is a pure function over the object; the admission kit
// (controllers/webhook/admit) decodes and answers.
//
// Defaulting fills concurrencyPolicy, paused and the two history limits (the CRD's schema
// defaults them too) and, unless TemplateNoDefaults is on, the core pod defaults of the Job or
// BroadcastJob template on create and when the template changes, as 1.8 does.
//
// It imports apis/, controllers/setup, the admission kit and the podtemplate, fieldrule and
// coredefaults leaves; it must not import the manager, other webhook packages or any controller
// (`controllers/...` other than `controllers/setup`, `controllers/webhook/podtemplate`,
// `controllers/webhook/fieldrule`, `controllers/webhook/coredefaults`, the kit `controllers/webhook/admit`
// and the deletion guard it holds, `controllers/webhook/deletionprotection`).
package advancedcronjob
