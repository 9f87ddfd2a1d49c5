package inbox

import "testing"

// TestParseEmailInLatin1: mail in ISO-8859-1 (common from Brazilian
// senders) is read, not refused: encoded words, the text body and a raw
// 8-bit display name.
func TestParseEmailInLatin1(t *testing.T) {
	raw := "From: Jos\xe9 <billing@supplier.test>\r\nTo: =?iso-8859-1?q?Contas_a_Pagar?= <ap@acme.test>\r\nSubject: =?iso-8859-1?q?Fatura_de_mar=E7o?=\r\n" +
		"Content-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: 8bit\r\n\r\nA\xe7\xe3o pendente.\r\n"
	e, err := ParseEmail([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if e.Subject != "Fatura de março" || e.Text != "Ação pendente." || e.From != "billing@supplier.test" || len(e.To) != 1 || e.To[0] != "ap@acme.test" {
		t.Fatalf("subject %q text %q from %q to %q", e.Subject, e.Text, e.From, e.To)
	}
	if e.Headers["To"] != "Contas a Pagar <ap@acme.test>" {
		t.Fatalf("To header %q", e.Headers["To"])
	}
	// Windows-1252 in a multipart message.
	raw = "From: a@b.test\r\nSubject: =?windows-1252?q?=93quoted=94?=\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\nContent-Type: text/plain; charset=windows-1252\r\n\r\n\x93ol\xe1\x94\r\n--x--\r\n"
	if e, err = ParseEmail([]byte(raw)); err != nil || e.Subject != "“quoted”" || e.Text != "“olá”" {
		t.Fatalf("windows-1252: %q %q %v", e.Subject, e.Text, err)
	}
}
