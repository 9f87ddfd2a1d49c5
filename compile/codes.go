package compile

import (
	"slices"

	"github.com/kobana/workflow/internal/jsonpos"
	"github.com/kobana/workflow/lang"
)

// Stable diagnostic codes. Codes of the placeholder language (package lang)
// and of JSON syntax are reported under their own names.
const (
	CodeJSONSyntax       = jsonpos.CodeSyntax       // the document is not JSON
	CodeDuplicateKey     = jsonpos.CodeDuplicateKey // a key appears twice in one object
	CodeInvalidUTF8      = jsonpos.CodeInvalidUTF8  // a string is not UTF-8
	CodeTooDeep          = jsonpos.CodeTooDeep      // nesting beyond the limit
	CodeTooLarge         = "document-too-large"     // more than MaxDocumentSize bytes
	CodeNotObject        = "document-not-object"    // the document is not a JSON object
	CodeUnknownTopLevel  = "unknown-top-level-key"  // warning: a key beside result/workflow
	CodeMissingResult    = "result-missing"         // warning: no result
	CodeWorkflowType     = "workflow-not-array"     // workflow is not an array
	CodeWorkflowEmpty    = "workflow-empty"         // warning: an empty workflow does nothing
	CodeTooManySteps     = "workflow-too-many-steps"
	CodeStepType         = "step-not-object"
	CodeUnknownField     = "step-unknown-field"
	CodeMissingField     = "step-missing-field"
	CodeFieldType        = "field-type" // a field has the wrong JSON type
	CodeUnknownStepType  = "step-unknown-type"
	CodeMethod           = "method-invalid"
	CodeURL              = "url-invalid"
	CodeURLUnencoded     = "url-unencoded" // warning: a character a URL may not hold, sent percent-encoded (in the host: punycode)
	CodeReservedHeader   = "header-reserved"
	CodeHeaderName       = "header-name-invalid"
	CodeHeaderValue      = "header-value-invalid"
	CodeHeaderDuplicate  = "header-duplicate"
	CodeBodyAndForm      = "body-form-exclusive"
	CodeFormFieldName    = "form-field-name-invalid"   // empty, or holds a control character
	CodeFormContentType  = "form-content-type-dropped" // warning
	CodeExpectedStatus   = "expected-status-invalid"
	CodeNotAllowed       = "placeholder-not-allowed"
	CodeForwardReference = "steps-forward-reference"
	CodeFileOutsideForm  = "attachment-file-in-text" // warning: whole file inlined as base64 in a URL or header
	// CodeCredentialLiteral: a credential written literally (a bearer
	// token, a key of a known format, a password in a URL or a field).
	CodeCredentialLiteral = "credential-literal"
	// CodeFileLiteral: file content written as a base64 literal instead of
	// a reference to the attachment.
	CodeFileLiteral = "file-content-literal"
)

// Codes of the rules that need Options: what is known of the workspace
// the document runs in.
const (
	// CodeUnknownSecret: a reference to a secret the workspace does not
	// have (Options.SecretNames).
	CodeUnknownSecret = "secrets-unknown-name"
	// CodeSecretDestination: a step puts a secret into a request to a host
	// outside the secret's destinations (Options.Policy).
	CodeSecretDestination = "secret-destination-denied"
	// CodeEgressDenied: a step's host is outside the egress list
	// (Options.Policy).
	CodeEgressDenied = "egress-denied"
)

// Codes of the placeholder language, re-exported for tools that list every code.
const (
	CodePlaceholderUnterminated = lang.CodeUnterminated
	CodePlaceholderEmpty        = lang.CodeEmpty
	CodePlaceholderSyntax       = lang.CodeSyntax
	CodeUnknownNamespace        = lang.CodeUnknownNS
	CodeSecretsReference        = lang.CodeSecretRef
	CodeKobanaReference         = lang.CodeKobanaRef
	CodeUnknownKobanaKey        = lang.CodeUnknownKobana
	CodeStepsReference          = lang.CodeStepsRef
	CodeAttachmentsReference    = lang.CodeAttachmentRef
	CodeTooManyPlaceholders     = lang.CodeTooManyRefs
	CodeIndexOutOfRange         = lang.CodeIndexOutOfRange
)

// AllCodes returns every diagnostic code Compile can report, as a new slice.
func AllCodes() []string { return slices.Clone(allCodes[:]) }

var allCodes = [...]string{
	CodeJSONSyntax, CodeDuplicateKey, CodeInvalidUTF8, CodeTooDeep, CodeTooLarge, CodeNotObject,
	CodeUnknownTopLevel, CodeMissingResult, CodeWorkflowType, CodeWorkflowEmpty, CodeTooManySteps,
	CodeStepType, CodeUnknownField, CodeMissingField, CodeFieldType, CodeUnknownStepType, CodeMethod,
	CodeURL, CodeURLUnencoded, CodeReservedHeader, CodeHeaderName, CodeHeaderValue, CodeHeaderDuplicate, CodeBodyAndForm,
	CodeFormFieldName, CodeFormContentType, CodeExpectedStatus, CodeNotAllowed, CodeForwardReference, CodeFileOutsideForm,
	CodeCredentialLiteral, CodeFileLiteral,
	CodePlaceholderUnterminated, CodePlaceholderEmpty, CodePlaceholderSyntax, CodeUnknownNamespace,
	CodeSecretsReference, CodeKobanaReference, CodeUnknownKobanaKey, CodeStepsReference,
	CodeAttachmentsReference, CodeTooManyPlaceholders, CodeIndexOutOfRange,
	CodeUnknownSecret, CodeSecretDestination, CodeEgressDenied,
}
