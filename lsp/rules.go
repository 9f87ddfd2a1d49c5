package lsp

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/lang"
)

// The texts below say, in the project's words, what each part of a workflow
// means and the rule behind it; completion shows them as documentation and
// hover as the explanation of a reference or a field. They follow the
// language reference: the platform's contract for workflows.

// fieldDoc describes a step field.
type fieldDoc struct {
	name, summary, rule string
}

var fieldDocs = []fieldDoc{
	typeDoc(),
	{"label", "free text", "Shown next to the step in the run record. Placeholders are not allowed here."},
	{"method", "GET, POST, PUT, PATCH or DELETE", "Optional, POST when absent. Written in upper case; placeholders are not allowed here."},
	{"url", "where the request goes", "Required. An absolute http or https URL, or one built of placeholders (even a whole URL held in a secret). After substitution it is checked by the SSRF guard: private, loopback and link-local addresses are refused."},
	{"headers", "header name → value", "Optional. Values may hold placeholders, names may not. Host, Content-Length, Transfer-Encoding, Connection, Upgrade, Proxy-Authorization and x-kobana-* are set by the platform and rejected here."},
	{"body", "a string, or an object or array sent as JSON", "Optional. A string is sent as is; an object or array is JSON-encoded and sent as application/json unless the step sets a content type. String values may hold placeholders, keys may not. Not together with form."},
	{"form", "field name → value, sent as multipart/form-data", "Optional. A field whose whole value is ${{email.attachments.N}} becomes a file part with the attachment's bytes, filename and content type. A content-type header is dropped: the boundary is the platform's. Not together with body."},
	{"expected_status", "the one status that counts as success", "Optional. An integer from 100 to 599, e.g. 201; when absent any 2xx is a success."},
}

// typeDoc describes the "type" field from the compiler's table of step
// types.
func typeDoc() fieldDoc {
	types := compile.StepTypes()
	var names, what []string
	for _, t := range types {
		names = append(names, strconv.Quote(t.Name))
		what = append(what, strconv.Quote(t.Name)+", "+t.Summary)
	}
	text := compile.StepTypesText()
	if len(types) == 1 {
		text += ", " + types[0].Summary
	} else {
		text += ": " + strings.Join(what, "; ")
	}
	return fieldDoc{"type", strings.Join(names, " or "), "Required. " + strings.ToUpper(text[:1]) + text[1:] + ". An unknown type rejects the whole workflow."}
}

func fieldDocFor(name string) (fieldDoc, bool) {
	for _, f := range fieldDocs {
		if f.name == name {
			return f, true
		}
	}
	return fieldDoc{}, false
}

// methodDocs says what each method is usually for.
var methodDocs = map[string]string{
	"GET":    "reads a resource; the step usually has no body",
	"POST":   "creates a resource or triggers an action (the default)",
	"PUT":    "replaces a resource",
	"PATCH":  "changes part of a resource",
	"DELETE": "removes a resource",
}

// namespaceDocs describes the four namespaces.
var namespaceDocs = map[string]string{
	"secrets": "A workspace secret, ${{secrets.KEY}}. Its value is put into the request as it is sent and redacted from everything kept.",
	"kobana":  "A fact about the run, ${{kobana.KEY}}: the environment, the time the step starts, the workspace, inbox, e-mail, agent and run ids.",
	"steps":   "The response of an earlier step, ${{steps.N.response.status|body|headers}}; N counts from 0.",
	"email":   "An attachment of the e-mail that triggered the run, ${{email.attachments.N}}; N counts from 0 in message order.",
}

// Rule texts of references.
const (
	ruleSecret = "The value is put into the request as it is sent and redacted from everything kept: the run record shows `[redacted secrets.%s]`. A name the workspace does not have fails the step before any request is sent."
	ruleKobana = "A fact with no value in this run (a workspace without a slug, say) fails the step before it is sent."
	ruleSteps  = "Only earlier steps resolve: a reference to this step or a later one fails the step before sending. If step %d failed or was skipped, this step is skipped and never sent."
	ruleBody   = "The body is read as JSON when its content type says so. A missing path fails the step, naming the first missing segment; a null value fails it too; an object or array is put in as JSON. Array indices are plain numbers, and only the body's own properties are read."
	ruleHeader = "Header names are matched without regard to case; repeated headers are joined with \", \"."
	ruleFile   = "As the whole value of a form field this is the file itself: a multipart part with its bytes, filename and content type. Anywhere else it is the file's base64. The bytes never pass through the model; the run record describes the file instead of holding it."
	ruleMeta   = "A reference to an attachment the e-mail does not have fails the step before any request is sent."
)

var attachmentDocs = map[string]string{
	"base64":       "the file's content in base64",
	"filename":     "the file's name, as the sender gave it",
	"content_type": "the file's content type: the sender's, or inferred from the extension when the sender declared none",
	"size":         "the file's size in bytes, as a decimal string",
}

// describeRef says what a reference resolves to and the rule behind it, in
// Markdown. wholeForm tells whether the reference is the whole value of a
// form field; step summarises the step it refers to (steps namespace).
func describeRef(r *lang.Ref, wholeForm bool, step *stepSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "`%s`\n\n", r.Placeholder())
	switch r.Namespace {
	case lang.Secrets:
		fmt.Fprintf(&b, "The workspace secret **%s**.\n\n", r.Key)
		fmt.Fprintf(&b, ruleSecret, r.Key)
	case lang.Kobana:
		fmt.Fprintf(&b, "Run fact **kobana.%s**: %s.\n\n%s", r.Key, lang.KobanaKeyDoc(r.Key), ruleKobana)
	case lang.Steps:
		switch r.Step {
		case lang.StepStatus:
			fmt.Fprintf(&b, "The status code of step %d's response, as a string.", r.Index)
		case lang.StepHeaders:
			fmt.Fprintf(&b, "The **%s** header of step %d's response. %s", r.Header, r.Index, ruleHeader)
		case lang.StepBody:
			if len(r.BodyPath) == 0 {
				fmt.Fprintf(&b, "The whole body of step %d's response, as text.", r.Index)
			} else {
				fmt.Fprintf(&b, "`%s` in the JSON body of step %d's response. %s", strings.Join(r.BodyPath, "."), r.Index, ruleBody)
			}
		}
		if step != nil {
			fmt.Fprintf(&b, "\n\nStep %d: %s", r.Index, step.describe())
		}
		b.WriteString("\n\n")
		fmt.Fprintf(&b, ruleSteps, r.Index)
	case lang.Email:
		switch r.Attachment {
		case lang.AttachmentContent:
			if wholeForm {
				fmt.Fprintf(&b, "Attachment %d of the e-mail, sent as a file.\n\n%s", r.Index, ruleFile)
			} else {
				fmt.Fprintf(&b, "Attachment %d of the e-mail, as base64 (it is not the whole value of a form field).\n\n%s", r.Index, ruleFile)
			}
		default:
			suffix := r.Path[len(r.Path)-1]
			fmt.Fprintf(&b, "Attachment %d of the e-mail: %s.\n\n%s", r.Index, attachmentDocs[suffix], ruleMeta)
		}
		fmt.Fprintf(&b, " Attachments count from 0, in message order.")
	}
	return b.String()
}

// describe summarises a step for a person: its label, method and url.
func (s *stepSummary) describe() string {
	method := s.method
	if method == "" {
		method = "POST"
	}
	var parts []string
	if s.label != "" {
		parts = append(parts, fmt.Sprintf("%q", s.label))
	}
	if s.url != "" {
		parts = append(parts, method+" "+s.url)
	} else {
		parts = append(parts, method)
	}
	return strings.Join(parts, ", ")
}
