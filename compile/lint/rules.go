package lint

import (
	"slices"
	"strings"

	"github.com/kobana/workflow/compile"
)

// Rule describes one diagnostic code for tools that list them (SARIF rules,
// documentation).
type Rule struct {
	// Code is the stable diagnostic code, e.g. "header-reserved".
	Code string
	// Severity is the severity the compiler reports the code with.
	Severity compile.Severity
	// Summary is one sentence saying what the rule requires.
	Summary string
}

// Rules returns every code of compile.AllCodes with its description, in the
// order of compile.AllCodes, as a new slice.
func Rules() []Rule { return slices.Clone(rules[:]) }

var rules = [...]Rule{
	{compile.CodeJSONSyntax, compile.SeverityError, "The document must be valid JSON."},
	{compile.CodeDuplicateKey, compile.SeverityError, "A key may appear only once in each JSON object."},
	{compile.CodeInvalidUTF8, compile.SeverityError, "The document must be valid UTF-8."},
	{compile.CodeTooDeep, compile.SeverityError, "Arrays and objects may nest at most 64 levels deep."},
	{compile.CodeTooLarge, compile.SeverityError, "A document may be at most 1 MiB."},
	{compile.CodeNotObject, compile.SeverityError, `The document must be a JSON object {"result": …, "workflow": […]}.`},
	{compile.CodeUnknownTopLevel, compile.SeverityWarning, `Only "result" and "workflow" are read at the top level; other keys are ignored.`},
	{compile.CodeMissingResult, compile.SeverityWarning, `The agent's analysis belongs in "result".`},
	{compile.CodeWorkflowType, compile.SeverityError, `"workflow" must be an array of steps (or null, or absent).`},
	{compile.CodeWorkflowEmpty, compile.SeverityWarning, `An empty "workflow" does nothing: omit it when no action is needed.`},
	{compile.CodeTooManySteps, compile.SeverityError, "A workflow may have at most 20 steps."},
	{compile.CodeStepType, compile.SeverityError, "Each step must be a JSON object."},
	{compile.CodeUnknownField, compile.SeverityError, "A step has only the fields type, label, method, url, headers, body, form and expected_status."},
	{compile.CodeMissingField, compile.SeverityError, `Every step needs "type" and "url".`},
	{compile.CodeFieldType, compile.SeverityError, "Each step field must have its JSON type (strings for type, label, method, url, header and form values; objects for headers and form)."},
	{compile.CodeUnknownStepType, compile.SeverityError, sentence(compile.StepTypesText()) + "; an unknown type rejects the whole workflow."},
	{compile.CodeMethod, compile.SeverityError, "The method must be GET, POST, PUT, PATCH or DELETE, in upper case."},
	{compile.CodeURL, compile.SeverityError, "The url must be an absolute http or https URL with a host, or start with a placeholder; it may not hold control characters (CR, LF, NUL, tab…)."},
	{compile.CodeURLUnencoded, compile.SeverityWarning, "Characters a URL may not hold as written (space, \", <, >, \\, ^, `, {, |, }, non-ASCII, a % that starts no %XX escape) are sent percent-encoded as UTF-8, and a non-ASCII host in its punycode form: write them so."},
	{compile.CodeReservedHeader, compile.SeverityError, "Host, Content-Length, Transfer-Encoding, Connection, Upgrade, Proxy-Authorization and x-kobana-* headers are set by the platform; Trailer, TE, Keep-Alive, Proxy-Connection and Expect cannot be sent as written."},
	{compile.CodeHeaderName, compile.SeverityError, "A header name must be an HTTP token: letters, digits and !#$%&'*+-.^_`|~."},
	{compile.CodeHeaderValue, compile.SeverityError, "A header value may not contain CR, LF, NUL or other control characters."},
	{compile.CodeHeaderDuplicate, compile.SeverityError, "Header names are case-insensitive: give each header once."},
	{compile.CodeBodyAndForm, compile.SeverityError, `A step has "body" or "form", not both.`},
	{compile.CodeFormFieldName, compile.SeverityError, "A form field needs a name without control characters (CR, LF, NUL…)."},
	{compile.CodeFormContentType, compile.SeverityWarning, "A content-type header on a form step is dropped: the multipart boundary is the platform's."},
	{compile.CodeExpectedStatus, compile.SeverityError, `"expected_status" must be an integer from 100 to 599.`},
	{compile.CodeNotAllowed, compile.SeverityError, "Placeholders are allowed only in the url, header values, body string values and form values."},
	{compile.CodeForwardReference, compile.SeverityWarning, "A step may reference only the responses of earlier steps: a step that refers to itself or a later step fails at run time without sending anything, while the other steps run."},
	{compile.CodeFileOutsideForm, compile.SeverityWarning, "A whole attachment in a url or header is sent as base64; send files as a form field instead."},
	{compile.CodeCredentialLiteral, compile.SeverityError, "A credential is never written literally (a bearer token, a key of a known format, a password in a URL, a header, a field or a query parameter): reference a workspace secret."},
	{compile.CodeFileLiteral, compile.SeverityError, "File content is never written as base64 (a data: URL, a document's bytes): reference the attachment, ${{email.attachments.N}}."},
	{compile.CodePlaceholderUnterminated, compile.SeverityError, `Every "${{" must be closed by "}}"; there is no escape for a literal "${{".`},
	{compile.CodePlaceholderEmpty, compile.SeverityError, "A placeholder must hold a reference: ${{ namespace.path }}."},
	{compile.CodePlaceholderSyntax, compile.SeverityError, "A reference is dot-separated segments of letters, digits, '_' and '-'."},
	{compile.CodeUnknownNamespace, compile.SeverityError, "A reference starts with one of the namespaces secrets, kobana, steps or email."},
	{compile.CodeSecretsReference, compile.SeverityError, "A secret is referenced as secrets.KEY."},
	{compile.CodeKobanaReference, compile.SeverityError, "A run fact is referenced as kobana.KEY."},
	{compile.CodeUnknownKobanaKey, compile.SeverityError, "kobana.KEY must name a known run fact, such as kobana.now or kobana.email_id."},
	{compile.CodeStepsReference, compile.SeverityError, "A step output is steps.N.response.status, steps.N.response.body[.path…] or steps.N.response.headers.NAME."},
	{compile.CodeAttachmentsReference, compile.SeverityError, "An attachment is email.attachments.N, optionally followed by .base64, .filename, .content_type or .size."},
	{compile.CodeTooManyPlaceholders, compile.SeverityError, "A string may hold at most 256 placeholders."},
	{compile.CodeIndexOutOfRange, compile.SeverityError, "Step and attachment indices must be small non-negative integers."},
	{compile.CodeUnknownSecret, compile.SeverityError, "When the workspace's secret names are known, a reference names one of them."},
	{compile.CodeSecretDestination, compile.SeverityError, "When the policy is known, a step whose host is written literally carries only secrets whose destinations include that host."},
	{compile.CodeEgressDenied, compile.SeverityError, "When the policy is known, a step whose host is written literally goes to a host of the egress list."},
}

// sentence is s with its first letter in upper case.
func sentence(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// RuleFor returns the rule of code; ok is false for a code the linter does
// not know.
func RuleFor(code string) (r Rule, ok bool) {
	for _, r := range rules {
		if r.Code == code {
			return r, true
		}
	}
	return Rule{}, false
}

// HelpURI is where each code is documented; the code is the anchor.
const HelpURI = "https://github.com/kobana/workflow/blob/main/docs/lint.md#"
