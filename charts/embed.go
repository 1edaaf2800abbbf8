// Package charts embeds the add-on's Helm chart (charts/kruise) so that the installer needs no
// network to install. It owns nothing else and must not import Helm or installer/.
package charts

import (
	"embed"
	"fmt"
	"io/fs"
)

// The all: prefix keeps files whose names start with _ or ., such as templates/_helpers.tpl and
// .helmignore, which a plain pattern would drop.
//
//go:embed all:kruise
var embedded embed.FS

// Kruise returns the chart's files, rooted at the chart directory (Chart.yaml at the top).
func Kruise() (fs.FS, error) {
	sub, err := fs.Sub(embedded, "kruise")
	if err != nil {
		return nil, fmt.Errorf("embedded chart: %w", err)
	}
	return sub, nil
}
