package sendurl

import (
	"errors"
	"strings"
	"testing"
)

// FuzzBuild: for any text and any piece, Build either refuses it or returns
// a URL with no character a URL may not hold, no fragment, and only valid
// %XX escapes; building that URL again changes nothing; without pieces the
// record is the URL; a piece is shown in the record exactly when it starts
// before the fragment.
func FuzzBuild(f *testing.F) {
	f.Add("https://a.example/a b?c=<d>#e", 8, 17)
	f.Add("https://bücher.example:80/ö%zz%41", 0, 5)
	f.Add("http://u@[::1]:8/x", 3, 3)
	f.Add("${{x}}", 0, 6)
	f.Fuzz(func(t *testing.T, s string, a, b int) {
		var pieces []Piece
		if 0 <= a && a <= b && b <= len(s) {
			pieces = []Piece{{Start: a, End: b, Record: "[redacted secrets.K]"}}
		}
		live, record, err := Build(s, pieces)
		if err != nil {
			var ce *ControlError
			var he *HostError
			if !errors.As(err, &ce) && !errors.As(err, &he) {
				t.Fatalf("Build(%q): %T %v", s, err, err)
			}
			return
		}
		for i := 0; i < len(live); i++ {
			c := live[i]
			if IsControl(c) || UnsafeByte(c) || c == '#' || c == '%' && LoneEscape(live, i) {
				t.Fatalf("Build(%q) = %q: byte %d (%q) may not be sent", s, live, i, c)
			}
		}
		again, _, err := Build(live, nil)
		if err != nil || again != live {
			t.Fatalf("Build(%q) = %q, and again %q (%v)", s, live, again, err)
		}
		if pieces == nil && record != live {
			t.Fatalf("Build(%q): record %q differs from %q without pieces", s, record, live)
		}
		if pieces != nil {
			cut := strings.IndexByte(s, '#')
			shown := strings.Contains(record, "[redacted secrets.K]")
			if before := cut < 0 || a < cut; shown != before {
				t.Fatalf("Build(%q, piece %d–%d): record %q", s, a, b, record)
			}
		}
	})
}
