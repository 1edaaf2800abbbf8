// Package webhooktest is what the webhook packages' tests share. For the fuzz targets next to
// each handler, it wraps raw object bytes into an admission request, runs the handler and checks
// that the answer is well formed (a known status code, or patches that apply to the object and
// leave valid JSON), turns the sample manifests under test/integration/testdata/samples into
// seeds (SeedSamples, or Seeds with hand-written Inputs), and runs a target over them (Fuzz,
// FuzzObject with Idempotent or Stable); Decoder and Reader give a handler the add-on's scheme
// and a fake client over a few objects, Manager gives a kind's webhook set a manager that
// reads from such a client, Cache and CacheManager hold objects in memory and answer reads as
// the manager's cache does (for benchmarks of handlers), and JSON gives an object's bytes. For the validation tables, it runs rows keyed by a sentence of
// behaviour (Case, RunCases), asserts one field error (AssertOneError) or the fields of every
// error (AssertFields), and lists the errors' fields and messages (Fields, TypedFields,
// Messages). It is imported only by tests and must not import kind packages (`controllers/...`
// other than `controllers/setup`).
package webhooktest
