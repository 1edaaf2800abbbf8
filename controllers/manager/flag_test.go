package manager

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

func TestFlagBind(t *testing.T) {
	var (
		s  = "a"
		b  = true
		n  = 1
		q  = float32(1.5)
		d  = time.Second
		ss = []string{"x"}
	)
	rows := []flagRow{
		{"s", &s, "a string", false}, {"b", &b, "a bool", false}, {"n", &n, "an int", true},
		{"q", &q, "a float", false}, {"d", &d, "a duration", false}, {"ss", &ss, "a list", false},
	}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	for _, f := range rows {
		f.bind(fs)
	}
	t.Run("each row's option is its flag's default", func(t *testing.T) {
		got := map[string]string{}
		fs.VisitAll(func(f *pflag.Flag) { got[f.Name] = f.DefValue })
		want := map[string]string{"s": "a", "b": "true", "n": "1", "q": "1.5", "d": "1s", "ss": "[x]"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("defaults (-want +got):\n%s", diff)
		}
	})
	t.Run("a parsed flag sets the option its row points to", func(t *testing.T) {
		if err := fs.Parse([]string{"--s=z", "--b=false", "--n=2", "--q=2.5", "--d=1m", "--ss=y,w"}); err != nil {
			t.Fatal(err)
		}
		got := []any{s, b, n, q, d, ss}
		if diff := cmp.Diff([]any{"z", false, 2, float32(2.5), time.Minute, []string{"y", "w"}}, got); diff != "" {
			t.Errorf("options (-want +got):\n%s", diff)
		}
	})
	t.Run("a hidden row's flag is hidden, the others are not", func(t *testing.T) {
		for _, f := range rows {
			if got := fs.Lookup(f.name).Hidden; got != f.hidden {
				t.Errorf("--%s hidden = %v, want %v", f.name, got, f.hidden)
			}
		}
	})
	t.Run("an option of a type no flag reads is a programming error naming the flag", func(t *testing.T) {
		defer func() {
			if r := recover(); r == nil || !cmp.Equal(r, "flag --u: options of type *uint have no flag") {
				t.Errorf("recover() = %v", r)
			}
		}()
		u := uint(1)
		flagRow{"u", &u, "", false}.bind(pflag.NewFlagSet("u", pflag.ContinueOnError))
	})
}
