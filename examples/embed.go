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
