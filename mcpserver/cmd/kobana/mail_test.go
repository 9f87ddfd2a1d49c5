package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
)

// invoiceEmail finds the e-mail demoInvoice became among the demo invoice
// inbox's e-mails in records.
func invoiceEmail(t testing.TB, records store.Records) (inbox.Email, bool) {
	t.Helper()
	list, err := inbox.NewRepo(records).Emails.All(context.Background(), "ws_finance", store.Query{Parent: "ibx_invoices"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		if e.Subject == "Invoice 2026-118" {
			return e, true
		}
	}
	return inbox.Email{}, false
}

// awaitProcessedInvoice waits until the e-mail demoInvoice became has left
// pending, and returns it; the test fails with why (and what) after within.
func awaitProcessedInvoice(t testing.TB, records store.Records, within time.Duration, what func() string) inbox.Email {
	t.Helper()
	var got inbox.Email
	err := testwait.Until(within, func() error {
		e, ok := invoiceEmail(t, records)
		if !ok || e.Status == inbox.EmailPending {
			return fmt.Errorf("the e-mail received is not processed yet")
		}
		got = e
		return nil
	})
	if err != nil {
		t.Fatalf("%v: %s", err, what())
	}
	return got
}
