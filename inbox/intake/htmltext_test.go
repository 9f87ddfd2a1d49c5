package intake

import (
	"strings"
	"testing"
)

func TestHTMLText(t *testing.T) {
	in := `<html><head><title>Fatura</title><style>p{color:red}</style></head><body>
<h1>Fatura   nº 42</h1><p>Valor:&nbsp;R$&nbsp;1.250,50 &amp; juros</p><script>alert(1)</script>
<div>Vencimento<br>amanhã</div><ul><li>item 1</li><li>item 2</li></ul></body></html>`
	got := htmlText(strings.NewReader(in))
	want := "Fatura nº 42\nValor: R$ 1.250,50 & juros\nVencimento\namanhã\nitem 1\nitem 2"
	if got != want {
		t.Fatalf("htmlText =\n%q\nwant\n%q", got, want)
	}
}

func TestHTMLBodyOnlyWithoutText(t *testing.T) {
	msg := "From: a@b.test\r\nContent-Type: multipart/alternative; boundary=x\r\n\r\n--x\r\nContent-Type: text/html; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n<p>A=E7=E3o <b>pendente</b></p>\r\n--x--\r\n"
	if got := htmlBody(strings.NewReader(msg)); got != "Ação pendente" {
		t.Fatalf("htmlBody = %q, want the decoded text", got)
	}
}
