package resolve_test

import (
	"fmt"
	"log"

	"github.com/kobana/workflow/resolve"
)

// A Redactor scrubs secret values from anything persisted or logged.
func ExampleRedactor() {
	secrets := resolve.SecretMap{"FINANCE_TOKEN": "tok-9f8e7d", "SLACK_WEBHOOK_URL": "https://hooks.example.com/T0/B0/key"}
	red := resolve.NewRedactor(secrets)
	fmt.Println(red.String("401 from https://hooks.example.com/T0/B0/key: bad token tok-9f8e7d"))
	// Output:
	// 401 from [redacted secrets.SLACK_WEBHOOK_URL]: bad token [redacted secrets.FINANCE_TOKEN]
}

// EMLFile is the attachment source of a run: the original .eml, opened on
// first use, listing its attachments in message order.
func ExampleEMLFile() {
	open := resolve.EMLFile("../examples/emails/acme-invoice.eml")
	atts, err := open()
	if err != nil {
		log.Fatal(err)
	}
	for i := range atts.Len() {
		a, _ := atts.Attachment(i)
		fmt.Printf("%d %s %s %d\n", a.Index, a.Filename, a.ContentType, a.Size)
	}
	// Output:
	// 0 DANFE-4521.pdf application/pdf 1168
	// 1 35261112345678000195550010000045211730192541-nfe.xml application/xml 1856
}

// Any secret store plugs in through the Secrets interface; an unknown key
// is reported as missing, and the step that needs it is not sent.
func ExampleSecrets() {
	var store resolve.Secrets = resolve.SecretMap{"TOKEN": "t0k"}
	for _, key := range []string{"TOKEN", "NOPE"} {
		_, ok, err := store.Secret(key)
		fmt.Println(key, ok, err)
	}
	// Output:
	// TOKEN true <nil>
	// NOPE false <nil>
}
