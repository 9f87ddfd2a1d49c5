package examples

import _ "embed" // for the go:embed directives below

// Payable is the complete example, workflows/payable.json:
// create a payable, attach the e-mail's first attachment as a file, notify a
// chat webhook whose whole URL is a secret.
//
//go:embed workflows/payable.json
var Payable string

// InvoiceEmail is emails/acme-invoice.eml, a supplier's invoice e-mail whose
// attachments are, in message order, the DANFE as a PDF (attachment 0) and
// the NF-e as XML (attachment 1).
//
//go:embed emails/acme-invoice.eml
var InvoiceEmail string

// InvoiceEmailName is the file name of InvoiceEmail.
const InvoiceEmailName = "acme-invoice.eml"

// AttachmentMultipart and AttachmentBase64 are the two ways of sending an
// attachment: workflows/attachment-multipart.json (a form file part) and
// workflows/attachment-base64.json (base64 inside a JSON body).
var (
	//go:embed workflows/attachment-multipart.json
	AttachmentMultipart string
	//go:embed workflows/attachment-base64.json
	AttachmentBase64 string
)

// PayableFacts and PayableResponses are run facts and example
// responses for Payable (inputs/payable.facts.json and
// inputs/payable.responses.json, in the form the language server
// reads beside a workflow as W.responses.json): what `kobana plan` and the
// playground plan it with.
var (
	//go:embed inputs/payable.facts.json
	PayableFacts string
	//go:embed inputs/payable.responses.json
	PayableResponses string
)
