// Package versions loads the add-on's compatibility table (data, not code) and answers which
// add-on versions support which cluster versions and runtimes.
package versions
