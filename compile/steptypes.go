package compile

import (
	"slices"
	"strconv"
	"strings"
)

// StepType is a kind of step: the value of a step's "type" and what such a
// step does.
type StepType struct {
	// Name is the value of the step's "type".
	Name string
	// Summary says what a step of this type does, in a few words ("an
	// outgoing HTTP call").
	Summary string
}

// stepTypes is the one table of step types: the compiler checks a step's
// "type" against it, and the linter's rules, the language server's
// completions and hovers, the agent's prompt and the schema's test read
// it, so a new type is one entry here (and its compiling, rendering and
// running), not a word to find in every tool.
var stepTypes = [...]StepType{
	{Name: "request", Summary: "an outgoing HTTP call"},
}

// StepTypes returns every step type, in the table's order, as a new slice.
func StepTypes() []StepType { return slices.Clone(stepTypes[:]) }

// StepTypeNames returns the names of the step types, in the table's order.
func StepTypeNames() []string {
	out := make([]string, len(stepTypes))
	for i, t := range stepTypes {
		out[i] = t.Name
	}
	return out
}

// IsStepType reports whether name is a step type.
func IsStepType(name string) bool {
	return slices.ContainsFunc(stepTypes[:], func(t StepType) bool { return t.Name == name })
}

// StepTypesText names the step types for a message: `the only step type is
// "request"` while there is one, `the step types are "a", "b" and "c"`
// when there are more.
func StepTypesText() string {
	if len(stepTypes) == 1 {
		return "the only step type is " + strconv.Quote(stepTypes[0].Name)
	}
	names := make([]string, len(stepTypes))
	for i, t := range stepTypes {
		names[i] = strconv.Quote(t.Name)
	}
	return "the step types are " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
