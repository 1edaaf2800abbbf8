// Package webhooktest drives admission handlers the way the webhook server does, for the fuzz
// targets next to each handler: it wraps raw object bytes into an admission request, runs the
// handler and checks that the answer is well formed (a known status code, or patches that apply
// to the object and leave valid JSON). It also turns the sample manifests under
// test/integration/testdata/samples into seeds. It is imported only by tests and must not
// import kind packages (`controllers/...` other than `controllers/setup`).
package webhooktest
