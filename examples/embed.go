package examples

import _ "embed" // for the go:embed directives below

// SeedComplete is the seed's complete example, workflows/seed-complete.json:
// create a payable, attach the e-mail's first attachment as a file, notify a
// chat webhook whose whole URL is a secret.
//
//go:embed workflows/seed-complete.json
var SeedComplete string

// InvoiceEmail is emails/acme-invoice.eml, a supplier's invoice e-mail whose
// attachments are, in message order, the DANFE as a PDF (attachment 0) and
// the NF-e as XML (attachment 1).
//
//go:embed emails/acme-invoice.eml
var InvoiceEmail string

// InvoiceEmailName is the file name of InvoiceEmail.
const InvoiceEmailName = "acme-invoice.eml"

// SeedMultipart and SeedBase64 are the seed's two ways of sending an
// attachment: workflows/seed-multipart.json (a form file part) and
// workflows/seed-base64.json (base64 inside a JSON body).
var (
	//go:embed workflows/seed-multipart.json
	SeedMultipart string
	//go:embed workflows/seed-base64.json
	SeedBase64 string
)

// SeedCompleteFacts and SeedCompleteResponses are run facts and example
// responses for SeedComplete (inputs/seed-complete.facts.json and
// inputs/seed-complete.responses.json, in the form the language server
// reads beside a workflow as W.responses.json): what `kobana plan` and the
// playground plan it with.
var (
	//go:embed inputs/seed-complete.facts.json
	SeedCompleteFacts string
	//go:embed inputs/seed-complete.responses.json
	SeedCompleteResponses string
)
