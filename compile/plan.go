package compile

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kobana/workflow/lang"
)

// MaxSteps is the largest number of steps a workflow may have.
const MaxSteps = 20

// MaxDocumentSize is the largest document Compile reads, in bytes.
const MaxDocumentSize = 1 << 20

var methods = [...]string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// Methods returns the HTTP methods a step may use, as a new slice the caller
// may keep or change without touching the compiler's rule.
func Methods() []string { return slices.Clone(methods[:]) }

// Plan is a validated workflow, ready to run.
type Plan struct {
	// Result is the agent's analysis as written in the document (nil when absent).
	Result json.RawMessage
	// Steps run in order; Steps[i].Index == i.
	Steps []*Step
}

// Step is one validated request step.
type Step struct {
	Index  int
	Label  string
	Method string
	URL    lang.Template
	// Headers in document order. On a form step a content-type header is
	// already dropped (the multipart boundary is ours).
	Headers []Header
	// Body is nil when the step has none; Form is nil when it has none; at
	// most one of them is set.
	Body *Body
	Form []FormField
	// ExpectedStatus is the one status that counts as success; 0 means any 2xx.
	ExpectedStatus int
	// DependsOn lists, in ascending order, the earlier steps whose responses
	// this step references. A step that references a failed or skipped step
	// is skipped.
	DependsOn []int
	// Forward lists, in document order, the references to the responses of
	// this step itself or of later steps (or of steps past the last one).
	// Such a step fails before anything is sent; the compiler warns about
	// each of them.
	Forward []*lang.Ref
}

// Header is a request header whose value may hold placeholders.
type Header struct {
	Name  string
	Value lang.Template
}

// BodyKind tells how a body is sent.
type BodyKind uint8

// Body kinds.
const (
	// BodyText is a string body, sent as is.
	BodyText BodyKind = iota + 1
	// BodyJSON is an object or array body, JSON-encoded.
	BodyJSON
)

// Body is a step's request body.
type Body struct {
	Kind BodyKind
	// Text is the body of a BodyText step.
	Text lang.Template
	// JSON is the value of a BodyJSON step.
	JSON *Value
}

// ValueKind is the JSON type of a body Value.
type ValueKind uint8

// Body value kinds.
const (
	// ValueLiteral is a number, true, false or null, kept as written.
	ValueLiteral ValueKind = iota + 1
	// ValueString is a string whose text may hold placeholders.
	ValueString
	ValueObject
	ValueArray
)

// Value is a node of a JSON body.
type Value struct {
	Kind ValueKind
	// Literal is the JSON text of a ValueLiteral ("1250.5", "true", "null").
	Literal string
	// Text is the template of a ValueString.
	Text lang.Template
	// Members of a ValueObject in document order; Elems of a ValueArray.
	Members []Member
	Elems   []*Value
}

// Member is a key of a JSON body object; keys never hold placeholders.
type Member struct {
	Key   string
	Value *Value
}

// FormField is a multipart/form-data field.
type FormField struct {
	Name string
	// Value is the field's text. When File is set the field is a file part
	// instead: its whole value was ${{email.attachments.N}}.
	Value lang.Template
	File  *lang.Ref
}

// Refs returns every reference of the step in document order: URL, header
// values, body strings, form values.
func (s *Step) Refs() []*lang.Ref {
	var refs []*lang.Ref
	refs = append(refs, s.URL.Refs()...)
	for _, h := range s.Headers {
		refs = append(refs, h.Value.Refs()...)
	}
	if s.Body != nil {
		if s.Body.Kind == BodyText {
			refs = append(refs, s.Body.Text.Refs()...)
		} else {
			refs = s.Body.JSON.appendRefs(refs)
		}
	}
	for _, f := range s.Form {
		if f.File != nil {
			refs = append(refs, f.File)
		} else {
			refs = append(refs, f.Value.Refs()...)
		}
	}
	return refs
}

func (v *Value) appendRefs(refs []*lang.Ref) []*lang.Ref {
	switch v.Kind {
	case ValueString:
		refs = append(refs, v.Text.Refs()...)
	case ValueObject:
		for _, m := range v.Members {
			refs = m.Value.appendRefs(refs)
		}
	case ValueArray:
		for _, e := range v.Elems {
			refs = e.appendRefs(refs)
		}
	}
	return refs
}

// Succeeds reports whether a response status is the step's success:
// ExpectedStatus, or any 2xx when it is 0. A run and a dry run judge a
// step by it alike.
func (s *Step) Succeeds(status int) bool {
	if s.ExpectedStatus != 0 {
		return status == s.ExpectedStatus
	}
	return status >= 200 && status <= 299
}

// Expects says which status is the step's success, for messages: "status
// 201", or "a 2xx status".
func (s *Step) Expects() string {
	if s.ExpectedStatus != 0 {
		return fmt.Sprintf("status %d", s.ExpectedStatus)
	}
	return "a 2xx status"
}

// HeaderValue returns the template of the first header named name
// (case-insensitively), if any.
func (s *Step) HeaderValue(name string) (lang.Template, bool) {
	for _, h := range s.Headers {
		if strings.EqualFold(h.Name, name) {
			return h.Value, true
		}
	}
	return lang.Template{}, false
}
