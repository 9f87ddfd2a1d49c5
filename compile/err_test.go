package compile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kobana/workflow/compile"
)

// TestErrKeepsEveryDiagnostic: the error Diagnostics.Err returns holds the
// warnings beside the errors, as its doc says, and its message counts errors.
func TestErrKeepsEveryDiagnostic(t *testing.T) {
	doc := []byte(`{"result":"x","workflow":[
		{"type":"http","method":"post","url":"https://erp.example/é"},
		{"type":"http","method":"GET","url":"https://erp.example/a","bogus":1}]}`)
	_, diags := compile.Compile(doc, compile.Options{})
	var warnings, errs int
	for _, d := range diags {
		if d.Severity == compile.SeverityWarning {
			warnings++
		} else {
			errs++
		}
	}
	if warnings == 0 || errs < 2 {
		t.Fatalf("the document gave %d warnings and %d errors; the test needs both: %v", warnings, errs, diags)
	}
	var inv *compile.InvalidError
	if err := diags.Err(); !errors.As(err, &inv) {
		t.Fatalf("Err() = %v; want an *InvalidError", err)
	}
	if len(inv.Diagnostics) != len(diags) {
		t.Errorf("the InvalidError holds %d diagnostics; want all %d", len(inv.Diagnostics), len(diags))
	}
	if want := "(and 1 more error)"; errs == 2 && !strings.HasSuffix(inv.Error(), want) {
		t.Errorf("message %q; want it to end %q", inv.Error(), want)
	}
	if (compile.Diagnostics{}).Err() != nil || diags[:0].Err() != nil {
		t.Error("Err() of no diagnostics is not nil")
	}
}
