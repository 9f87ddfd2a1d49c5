package eml

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoCharsetConversion guards byte-exactness: neither go-message's root
// package (whose global CharsetReader converts text bodies) nor its charset
// package (which installs one) may be linked in.
func TestNoCharsetConversion(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch dep {
		case "github.com/emersion/go-message", "github.com/emersion/go-message/charset", "github.com/emersion/go-message/mail":
			t.Errorf("%s is linked in; attachment bytes could be re-encoded", dep)
		}
		if strings.HasPrefix(dep, "github.com/kobana/workflow/") && dep != "github.com/kobana/workflow/resolve/eml" {
			t.Errorf("%s is imported; this package must stay a leaf", dep)
		}
	}
}
