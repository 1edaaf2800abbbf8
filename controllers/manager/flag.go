package manager

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// flagRow is one row of the manager's flag table: its name, the option it sets (whose value
// when bound is the default), its help, and whether --help leaves it out (test and tuning
// knobs).
type flagRow struct {
	name   string
	value  any
	usage  string
	hidden bool
}

// bind defines f on fs by the type of the option it points to.
func (f flagRow) bind(fs *pflag.FlagSet) {
	switch p := f.value.(type) {
	case *string:
		fs.StringVar(p, f.name, *p, f.usage)
	case *bool:
		fs.BoolVar(p, f.name, *p, f.usage)
	case *int:
		fs.IntVar(p, f.name, *p, f.usage)
	case *float32:
		fs.Float32Var(p, f.name, *p, f.usage)
	case *time.Duration:
		fs.DurationVar(p, f.name, *p, f.usage)
	case *[]string:
		fs.StringSliceVar(p, f.name, *p, f.usage)
	default:
		panic(fmt.Sprintf("flag --%s: options of type %T have no flag", f.name, f.value))
	}
	if f.hidden {
		_ = fs.MarkHidden(f.name)
	}
}
