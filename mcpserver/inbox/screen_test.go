package inbox_test

import (
	"strings"
	"testing"

	"github.com/kobana/workflow/mcpserver/inbox"
)

func headers(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[strings.ToLower(kv[i])] = kv[i+1]
	}
	return func(k string) string { return m[strings.ToLower(k)] }
}

func TestAutoReply(t *testing.T) {
	for _, c := range []struct {
		name string
		h    []string
		auto bool
	}{
		{"plain", []string{"From", "ana@acme.example", "Subject", "Fatura"}, false},
		{"auto-submitted no", []string{"Auto-Submitted", "no"}, false},
		{"auto-submitted NO with comment", []string{"Auto-Submitted", " No (a person wrote this)"}, false},
		{"auto-replied", []string{"Auto-Submitted", "auto-replied"}, true},
		{"auto-generated with params", []string{"Auto-Submitted", "auto-generated; owner-email=\"x@y\""}, true},
		{"auto-notified", []string{"Auto-Submitted", "Auto-Notified"}, true},
		{"precedence bulk", []string{"Precedence", "bulk"}, true},
		{"precedence junk", []string{"Precedence", "JUNK"}, true},
		{"precedence list", []string{"Precedence", "list"}, true},
		{"precedence auto_reply", []string{"Precedence", "auto_reply"}, true},
		{"precedence first-class", []string{"Precedence", "first-class"}, false},
		{"x-autoreply", []string{"X-Autoreply", "yes"}, true},
		{"x-autorespond", []string{"X-Autorespond", "Out of office"}, true},
		{"exchange oof", []string{"X-Auto-Response-Suppress", "DR, OOF, AutoReply"}, true},
		{"exchange all", []string{"X-Auto-Response-Suppress", "All"}, true},
		{"exchange dr only", []string{"X-Auto-Response-Suppress", "DR, RN, NRN"}, false},
		// A Return-Path in the content is the sender's to write: the
		// envelope says whether the reverse path was null (Screen).
		{"content return path <>", []string{"Return-Path", "<>"}, false},
		{"normal return path", []string{"Return-Path", "<ana@acme.example>"}, false},
		{"mailing list", []string{"List-Id", "Fornecedores <fornecedores.acme.example>"}, true},
		{"mailer daemon", []string{"From", "Mail Delivery System <MAILER-DAEMON@mx.acme.example>"}, true},
		{"postmaster", []string{"From", "postmaster@acme.example"}, true},
		{"noreply is not an auto-reply", []string{"From", "noreply@erp.example"}, false},
	} {
		why := inbox.AutoReply(headers(c.h...))
		if (why != "") != c.auto {
			t.Errorf("%s: AutoReply = %q, want auto=%v", c.name, why, c.auto)
		}
	}
}

func TestMatchSender(t *testing.T) {
	for _, c := range []struct {
		rule, addr string
		want       bool
	}{
		{"ana@acme.example", "ana@acme.example", true},
		{"ana@acme.example", "ANA@Acme.Example", true},
		{"ana@acme.example", "bia@acme.example", false},
		{"@acme.example", "bia@acme.example", true},
		{"@ACME.example", "bia@acme.EXAMPLE", true},
		{"@acme.example", "bia@mail.acme.example", false},
		{"@acme.example", "bia@evilacme.example", false},
		{"@acme.example", "acme.example", false},
		{"@acme.example", "a@b@acme.example", false},
		{"@acme.example", "", false},
		{"", "ana@acme.example", false},
	} {
		if got := inbox.MatchSender(c.rule, c.addr); got != c.want {
			t.Errorf("MatchSender(%q, %q) = %v, want %v", c.rule, c.addr, got, c.want)
		}
	}
}

func authed(from string) *inbox.SenderAuth {
	return &inbox.SenderAuth{DMARC: inbox.AuthCheck{Result: inbox.AuthPass}, AuthenticatedFrom: from}
}

func TestScreenSenders(t *testing.T) {
	ib := inbox.Inbox{Recipients: []string{"@acme.example", "billing@initech.example"}}
	e := inbox.Email{From: "ana@acme.example", Subject: "x"}
	// A From header alone proves nothing: not authenticated, rejected.
	if r := inbox.Screen(ib, inbox.Limits{}, e); r == nil || r.Reason != inbox.RejectSender || !strings.Contains(r.Detail, "could not be authenticated") {
		t.Fatalf("unauthenticated sender: %v", r)
	}
	// A forged From with another authenticated identity is rejected too.
	e.Auth = authed("mallory@evil.example")
	if r := inbox.Screen(ib, inbox.Limits{}, e); r == nil || r.Reason != inbox.RejectSender || !strings.Contains(r.Detail, "mallory@evil.example") {
		t.Fatalf("forged sender: %v", r)
	}
	e.Auth = authed("ana@acme.example")
	if r := inbox.Screen(ib, inbox.Limits{}, e); r != nil {
		t.Fatalf("allowed domain: %v", r)
	}
	e.Auth = authed("billing@initech.example")
	if r := inbox.Screen(ib, inbox.Limits{}, e); r != nil {
		t.Fatalf("allowed address: %v", r)
	}
	// No recipients: anyone, authenticated or not.
	e.Auth = nil
	if r := inbox.Screen(inbox.Inbox{}, inbox.Limits{}, e); r != nil {
		t.Fatalf("open inbox: %v", r)
	}
}

func TestScreenFilters(t *testing.T) {
	ib := inbox.Inbox{Filters: inbox.Filters{SubjectContains: []string{"Fatura", "invoice"}, RejectAutoReplies: true}}
	e := inbox.Email{Subject: "Sua FATURA de novembro", Headers: map[string]string{"Subject": "Sua FATURA de novembro"}}
	if r := inbox.Screen(ib, inbox.Limits{}, e); r != nil {
		t.Fatalf("matching subject: %v", r)
	}
	e.Subject = "Reunião amanhã"
	if r := inbox.Screen(ib, inbox.Limits{}, e); r == nil || r.Reason != inbox.RejectSubject {
		t.Fatalf("other subject: %v", r)
	}
	e.Subject = "Re: invoice 42"
	e.Headers["Auto-Submitted"] = "auto-replied"
	r := inbox.Screen(ib, inbox.Limits{}, e)
	if r == nil || r.Reason != inbox.RejectAutoReply || !strings.Contains(r.Detail, "Auto-Submitted: auto-replied") {
		t.Fatalf("auto-reply: %v", r)
	}
	var rec inbox.Email
	rec.Reject(r)
	if rec.Status != inbox.EmailRejected || !strings.HasPrefix(rec.StatusDetail, "auto_reply: ") {
		t.Fatalf("Reject: %q %q", rec.Status, rec.StatusDetail)
	}
	// The envelope's null reverse path marks an automatic reply without
	// any header saying so.
	delete(e.Headers, "Auto-Submitted")
	e.Auth = &inbox.SenderAuth{NullSender: true}
	if r := inbox.Screen(ib, inbox.Limits{}, e); r == nil || r.Reason != inbox.RejectAutoReply || !strings.Contains(r.Detail, "MAIL FROM:<>") {
		t.Fatalf("null reverse path: %v", r)
	}
	// Without reject_auto_replies an auto-reply passes.
	ib.Filters.RejectAutoReplies = false
	if r := inbox.Screen(ib, inbox.Limits{}, e); r != nil {
		t.Fatalf("auto-reply allowed: %v", r)
	}
	// Empty entries never match everything.
	ib.Filters.SubjectContains = []string{""}
	if r := inbox.Screen(ib, inbox.Limits{}, e); r == nil || r.Reason != inbox.RejectSubject {
		t.Fatalf("empty subject filter: %v", r)
	}
}

func TestScreenAttachments(t *testing.T) {
	pdf := inbox.AttachmentInfo{Index: 0, Filename: "nota.pdf", ContentType: "application/pdf", Size: 900}
	png := inbox.AttachmentInfo{Index: 1, Filename: "logo.png", ContentType: "image/png", Size: 50}
	rules := inbox.AttachmentRules{MaxBytes: 1000, AllowedTypes: []string{"application/pdf", "image/*"}, Required: true}
	for _, c := range []struct {
		name   string
		rules  inbox.AttachmentRules
		plan   int64
		atts   []inbox.AttachmentInfo
		reason string
	}{
		{"fits", rules, 0, []inbox.AttachmentInfo{pdf, png}, ""},
		{"required, none", rules, 0, nil, inbox.RejectAttachmentRequired},
		{"not required, none", inbox.AttachmentRules{}, 0, nil, ""},
		{"too large for the inbox", rules, 0, []inbox.AttachmentInfo{{Index: 0, Filename: "big.pdf", ContentType: "application/pdf", Size: 1001}}, inbox.RejectAttachmentTooLarge},
		{"plan limit is smaller", rules, 800, []inbox.AttachmentInfo{pdf}, inbox.RejectAttachmentTooLarge},
		{"plan limit alone", inbox.AttachmentRules{}, 100, []inbox.AttachmentInfo{png, pdf}, inbox.RejectAttachmentTooLarge},
		{"type not allowed", rules, 0, []inbox.AttachmentInfo{pdf, {Index: 1, Filename: "a.zip", ContentType: "application/zip", Size: 5}}, inbox.RejectAttachmentType},
		{"type case and params ignored", inbox.AttachmentRules{AllowedTypes: []string{"Application/PDF"}}, 0, []inbox.AttachmentInfo{{ContentType: "application/pdf; name=x.pdf"}}, ""},
		{"wildcard does not cross majors", inbox.AttachmentRules{AllowedTypes: []string{"image/*"}}, 0, []inbox.AttachmentInfo{pdf}, inbox.RejectAttachmentType},
	} {
		r := c.rules.Check(c.atts, c.plan)
		got := ""
		if r != nil {
			got = r.Reason
		}
		if got != c.reason {
			t.Errorf("%s: %v, want reason %q", c.name, r, c.reason)
		}
	}
	r := rules.Check([]inbox.AttachmentInfo{pdf, {Index: 1, Filename: "huge.pdf", ContentType: "application/pdf", Size: 5000}}, 0)
	if r == nil || !strings.Contains(r.Detail, "attachment 1 (huge.pdf)") || !strings.Contains(r.Detail, "the inbox's limit of 1000") {
		t.Errorf("detail names the attachment and the limit: %v", r)
	}
}

// FuzzAutoReply holds AutoReply to never panicking and to its first rule:
// an Auto-Submitted keyword other than "no" always counts.
func FuzzAutoReply(f *testing.F) {
	for _, s := range []string{"no", "auto-replied", ";", "(", " (x) no", "auto-generated; a=b", ""} {
		f.Add(s, "bulk", "DR")
	}
	f.Fuzz(func(t *testing.T, submitted, precedence, suppress string) {
		why := inbox.AutoReply(headers("Auto-Submitted", submitted, "Precedence", precedence, "X-Auto-Response-Suppress", suppress))
		if strings.EqualFold(strings.TrimSpace(submitted), "auto-replied") && why == "" {
			t.Fatalf("Auto-Submitted %q not an auto-reply", submitted)
		}
	})
}
