package compile_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kobana/workflow/compile"
)

// TestRuleTablesCannotBeChangedFromOutside: the lists the compiler enforces
// are handed out as copies, so a caller that edits one (by mistake or on
// purpose) changes neither the compiler's rules nor what the next caller sees.
func TestRuleTablesCannotBeChangedFromOutside(t *testing.T) {
	t.Parallel()
	tables := map[string]func() []string{
		"Methods":          compile.Methods,
		"StepFields":       compile.StepFields,
		"ReservedHeaders":  compile.ReservedHeaders,
		"TransportHeaders": compile.TransportHeaders,
		"AllCodes":         compile.AllCodes,
		"StepTypeNames":    compile.StepTypeNames,
	}
	for name, get := range tables {
		before := get()
		if len(before) == 0 {
			t.Fatalf("%s is empty", name)
		}
		mine := get()
		for i := range mine {
			mine[i] = "changed"
		}
		_ = append(mine[:0], "appended")
		if after := get(); !slices.Equal(before, after) {
			t.Errorf("%s changed from outside: %v, then %v", name, before, after)
		}
	}
	// The compiler still enforces the original lists.
	m := compile.Methods()
	m[0] = "BREW"
	if _, ds := compile.Compile([]byte(`{"result":1,"workflow":[{"type":"request","method":"GET","url":"https://a.example/"}]}`), compile.Options{}); ds.HasErrors() {
		t.Errorf("GET refused after a caller edited its copy of Methods: %v", ds)
	}
	if _, ds := compile.Compile([]byte(`{"result":1,"workflow":[{"type":"request","method":"BREW","url":"https://a.example/"}]}`), compile.Options{}); !ds.HasErrors() {
		t.Error("BREW accepted after a caller wrote it into its copy of Methods")
	}
	h := compile.ReservedHeaders()
	h[0] = "X-Other"
	if _, ds := compile.Compile([]byte(`{"result":1,"workflow":[{"type":"request","url":"https://a.example/","headers":{"Host":"x"}}]}`), compile.Options{}); !ds.HasErrors() {
		t.Error("Host accepted after a caller edited its copy of ReservedHeaders")
	}
}

// The step types' table answers the same in each of its forms: every name
// is a step type and named in the text messages use, and nothing else is
// a step type.
func TestStepTypesTable(t *testing.T) {
	t.Parallel()
	types := compile.StepTypes()
	if len(types) == 0 {
		t.Fatal("no step types")
	}
	for i, st := range types {
		if !compile.IsStepType(st.Name) || compile.StepTypeNames()[i] != st.Name || st.Summary == "" ||
			!strings.Contains(compile.StepTypesText(), `"`+st.Name+`"`) {
			t.Errorf("step type %+v", st)
		}
	}
	for _, name := range []string{"", "Request", "email", "request "} {
		if compile.IsStepType(name) {
			t.Errorf("%q is taken for a step type", name)
		}
	}
}
