// Package apis registers every API version this add-on serves.
//
// The API packages are imported by the controllers, the daemon and the installer, never the
// other way round: this package and the versions it registers must not import anything of the
// add-on outside apis/ (`...` other than `apis/...`).
package apis
