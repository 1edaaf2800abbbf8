package webhook

import (
	"regexp"
)

// versionedPath is /<mutate|validate>-<group with dashes>-<version>-<kind>.
var versionedPath = regexp.MustCompile(`^/(mutate|validate)-([a-z0-9-]+-io)-(v[0-9]+(?:(?:alpha|beta)[0-9]+)?)-([a-z0-9]+)$`)

// unversionedPath is /<mutate|validate>-<group with dashes>-<kind>.
var unversionedPath = regexp.MustCompile(`^/(mutate|validate)-([a-z0-9-]+-io)-([a-z0-9]+)$`)

// unversionedKinds are the kinds 1.8 serves at an unversioned path, with the versions whose
// versioned path we serve as well.
func unversionedKinds() map[string][]string {
	return map[string][]string{
		"apps-kruise-io/statefulset":            {"v1beta1", "v1alpha1"},
		"apps-kruise-io/persistentpodstate":     {"v1alpha1"},
		"apps-kruise-io/podprobemarker":         {"v1alpha1"},
		"policy-kruise-io/podunavailablebudget": {"v1alpha1"},
	}
}

// PathForms returns every path a handler registered under the canonical 1.8 path is served
// at, canonical first. A versioned path (/mutate-apps-kruise-io-v1alpha1-cloneset) is served
// unversioned too (/mutate-apps-kruise-io-cloneset); one of the kinds 1.8 serves unversioned
// (/mutate-apps-kruise-io-statefulset) is served under each of its versions too. Any other
// path (/mutate-pod, /convert) has only itself.
func PathForms(canonical string) []string {
	if m := versionedPath.FindStringSubmatch(canonical); m != nil {
		return []string{canonical, "/" + m[1] + "-" + m[2] + "-" + m[4]}
	}
	forms := []string{canonical}
	if m := unversionedPath.FindStringSubmatch(canonical); m != nil {
		for _, v := range unversionedKinds()[m[2]+"/"+m[3]] {
			forms = append(forms, "/"+m[1]+"-"+m[2]+"-"+v+"-"+m[3])
		}
	}
	return forms
}
