package builder

// setKey sets m[k] = v, allocating m when needed.
func setKey(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// merge copies every entry of from into m, allocating m when needed; from stays the caller's.
func merge(m, from map[string]string) map[string]string {
	for k, v := range from {
		m = setKey(m, k, v)
	}
	return m
}
