package eml

import (
	"testing"

	"github.com/kobana/workflow/internal/leandeps"
)

// TestNoCharsetConversion guards byte-exactness: neither go-message's root
// package (whose global CharsetReader converts text bodies) nor its charset
// package (which installs one) may be linked in, and the package stays a
// leaf of the module.
func TestNoCharsetConversion(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the go command")
	}
	leandeps.Check(t, ".", "resolve/eml", leandeps.Rules{
		Exact:   []string{"github.com/emersion/go-message", "github.com/emersion/go-message/charset", "github.com/emersion/go-message/mail"},
		Why:     "attachment bytes could be re-encoded",
		Allowed: []string{"resolve/eml"},
	})
}
