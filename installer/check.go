package installer

// CheckOffline validates o as install and upgrade do before they touch a cluster: the names,
// the chart, the size and placement choices, and the values against the chart's schema. Every
// error is an *InvalidError; nil says only that no cluster is needed to refuse o, not that a
// cluster will accept it. The HTTP API calls it to answer 400 at the request.
func CheckOffline(o Options) error {
	_, err := prepare(o)
	return err
}
