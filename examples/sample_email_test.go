package examples

import (
	"bytes"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kobana/workflow/internal/minipdf"
	"github.com/kobana/workflow/resolve/eml"
)

// go test ./examples -run TestSampleEmail -update rewrites emails/acme-invoice.eml.
var update = flag.Bool("update", false, "rewrite the generated sample e-mail")

// Invoice data shared by the PDF, the XML and the message text.
const (
	invoiceNumber = "4521"
	supplierCNPJ  = "12345678000195"
	supplierName  = "ACME Distribuidora de Materiais Ltda"
	buyerCNPJ     = "98765432000110"
	buyerName     = "Kobana Demonstracoes Ltda"
	invoiceTotal  = "1250.50"
)

// accessKey is the NF-e's 44-digit access key: UF, year-month, CNPJ, model,
// series, number, emission type, numeric code and the mod-11 check digit.
func accessKey() string {
	k := "35" + "2611" + supplierCNPJ + "55" + "001" + fmt.Sprintf("%09s", invoiceNumber) + "1" + "73019254"
	sum, w := 0, 2
	for i := len(k) - 1; i >= 0; i-- {
		sum += int(k[i]-'0') * w
		if w++; w > 9 {
			w = 2
		}
	}
	dv := 11 - sum%11
	if dv >= 10 {
		dv = 0
	}
	return k + strconv.Itoa(dv)
}

// samplePDF builds a one-page PDF 1.4 (the DANFE of the invoice) with a
// correct cross-reference table.
func samplePDF() []byte {
	lines := []string{
		"DANFE - Documento Auxiliar da Nota Fiscal Eletronica",
		"NF-e No. 000.004.521  Serie 001",
		"Emitente: " + supplierName + "  CNPJ 12.345.678/0001-95",
		"Destinatario: " + buyerName + "  CNPJ 98.765.432/0001-10",
		"Chave de acesso: " + accessKey(),
		"1 x Servico de instalacao e materiais (pedido 7781)",
		"Valor total da nota: R$ 1.250,50",
		"Vencimento: 2026-12-10",
	}
	var content bytes.Buffer
	content.WriteString("BT\n/F1 11 Tf\n56 780 Td\n14 TL\n")
	for _, l := range lines {
		fmt.Fprintf(&content, "(%s) '\n", l)
	}
	content.WriteString("ET\n")

	objects := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", content.Len(), content.String()),
		"<< /Title (DANFE NF-e 4521) /Author (ACME Distribuidora) /Producer (kobana examples) >>",
	}
	// The comment of high bytes marks the file as binary.
	return minipdf.Write("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", objects, " /Info 6 0 R")
}

// sampleNFe is the invoice as an NF-e 4.00 authorised document (nfeProc),
// without the XML signature.
func sampleNFe() []byte {
	key := accessKey()
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>
<nfeProc xmlns="http://www.portalfiscal.inf.br/nfe" versao="4.00">
  <NFe>
    <infNFe Id="NFe` + key + `" versao="4.00">
      <ide>
        <cUF>35</cUF><cNF>73019254</cNF><natOp>Venda de mercadoria e prestação de serviço</natOp>
        <mod>55</mod><serie>1</serie><nNF>` + invoiceNumber + `</nNF>
        <dhEmi>2026-11-27T09:14:00-03:00</dhEmi><tpNF>1</tpNF><tpAmb>2</tpAmb>
        <cDV>` + key[43:] + `</cDV>
      </ide>
      <emit>
        <CNPJ>` + supplierCNPJ + `</CNPJ><xNome>` + supplierName + `</xNome>
        <enderEmit><xLgr>Rua das Indústrias</xLgr><nro>450</nro><xMun>São Paulo</xMun><UF>SP</UF><CEP>04567000</CEP></enderEmit>
        <IE>123456789110</IE><CRT>3</CRT>
      </emit>
      <dest>
        <CNPJ>` + buyerCNPJ + `</CNPJ><xNome>` + buyerName + `</xNome>
        <email>financeiro@example.inbox.kobana.com.br</email>
      </dest>
      <det nItem="1">
        <prod>
          <cProd>INST-7781</cProd><xProd>Serviço de instalação e materiais (pedido 7781)</xProd>
          <NCM>84159090</NCM><CFOP>5102</CFOP><uCom>UN</uCom><qCom>1.0000</qCom>
          <vUnCom>` + invoiceTotal + `</vUnCom><vProd>` + invoiceTotal + `</vProd>
        </prod>
      </det>
      <total>
        <ICMSTot><vBC>0.00</vBC><vICMS>0.00</vICMS><vProd>` + invoiceTotal + `</vProd><vNF>` + invoiceTotal + `</vNF></ICMSTot>
      </total>
      <cobr>
        <fat><nFat>` + invoiceNumber + `</nFat><vOrig>` + invoiceTotal + `</vOrig><vLiq>` + invoiceTotal + `</vLiq></fat>
        <dup><nDup>001</nDup><dVenc>2026-12-10</dVenc><vDup>` + invoiceTotal + `</vDup></dup>
      </cobr>
    </infNFe>
  </NFe>
  <protNFe versao="4.00">
    <infProt><tpAmb>2</tpAmb><chNFe>` + key + `</chNFe><dhRecbto>2026-11-27T09:14:21-03:00</dhRecbto><nProt>135260000045213</nProt><cStat>100</cStat><xMotivo>Autorizado o uso da NF-e</xMotivo></infProt>
  </protNFe>
</nfeProc>
`)
}

// base64Lines encodes b as base64 in lines of 76 characters ending in CRLF.
func base64Lines(b []byte) string {
	s := base64.StdEncoding.EncodeToString(b)
	var out strings.Builder
	for len(s) > 76 {
		out.WriteString(s[:76] + "\r\n")
		s = s[76:]
	}
	out.WriteString(s + "\r\n")
	return out.String()
}

// sampleEmail builds emails/acme-invoice.eml: a text body in Portuguese
// (quoted-printable), the DANFE PDF and the NF-e XML, with CRLF line ends.
func sampleEmail() []byte {
	key := accessKey()
	pdfName := "DANFE-" + invoiceNumber + ".pdf"
	xmlName := key + "-nfe.xml"
	const boundary = "=_acme_nfe_4521_b1"
	text := strings.Join([]string{
		"Prezados,",
		"",
		"Segue a nota fiscal eletr=C3=B4nica n=C2=BA " + invoiceNumber + " referente ao pedido 7781, no valor de R$ 1.250,=",
		"50, com vencimento em 10/12/2026.",
		"",
		"Anexos: DANFE em PDF e o XML da NF-e.",
		"",
		"Atenciosamente,",
		"Departamento de Faturamento",
		supplierName,
	}, "\r\n")
	parts := []string{
		"From: \"ACME Distribuidora\" <faturamento@acme.example.com.br>",
		"To: financeiro@example.inbox.kobana.com.br",
		"Subject: =?UTF-8?Q?Nota_fiscal_eletr=C3=B4nica_" + invoiceNumber + "_-_ACME_Distribuidora?=",
		"Date: Fri, 27 Nov 2026 09:20:13 -0300",
		"Message-ID: <nfe-" + invoiceNumber + ".20261127092013@acme.example.com.br>",
		"MIME-Version: 1.0",
		"Content-Type: multipart/mixed; boundary=\"" + boundary + "\"",
		"",
		"This is a multi-part message in MIME format.",
		"",
		"--" + boundary,
		"Content-Type: text/plain; charset=UTF-8",
		"Content-Transfer-Encoding: quoted-printable",
		"",
		text,
		"",
		"--" + boundary,
		"Content-Type: application/pdf; name=\"" + pdfName + "\"",
		"Content-Disposition: attachment; filename=\"" + pdfName + "\"",
		"Content-Transfer-Encoding: base64",
		"",
		strings.TrimSuffix(base64Lines(samplePDF()), "\r\n"),
		"",
		"--" + boundary,
		"Content-Type: application/xml; name=\"" + xmlName + "\"",
		"Content-Disposition: attachment; filename=\"" + xmlName + "\"",
		"Content-Transfer-Encoding: base64",
		"",
		strings.TrimSuffix(base64Lines(sampleNFe()), "\r\n"),
		"",
		"--" + boundary + "--",
		"",
	}
	return []byte(strings.Join(parts, "\r\n"))
}

func TestSampleEmail(t *testing.T) {
	want := sampleEmail()
	const path = "emails/acme-invoice.eml"
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	onDisk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(onDisk, want) {
		t.Fatalf("%s is not what the generator makes; run go test ./examples -run TestSampleEmail -update", path)
	}
	if !*update && InvoiceEmail != string(want) {
		t.Fatal("the embedded InvoiceEmail differs from " + path)
	}
	m, err := eml.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	atts := m.Attachments()
	if len(atts) != 2 {
		t.Fatalf("%d attachments, want 2", len(atts))
	}
	if a := atts[0]; a.Filename != "DANFE-4521.pdf" || a.ContentType != "application/pdf" || a.Size != int64(len(samplePDF())) {
		t.Errorf("attachment 0: %+v", a)
	}
	if a := atts[1]; a.Filename != accessKey()+"-nfe.xml" || a.ContentType != "application/xml" || a.Size != int64(len(sampleNFe())) {
		t.Errorf("attachment 1: %+v", a)
	}
	for i, orig := range [][]byte{samplePDF(), sampleNFe()} {
		rc, err := m.Open(i)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, orig) {
			t.Errorf("attachment %d decodes to %d bytes (%v), want the %d generated", i, len(got), err, len(orig))
		}
	}
}

// TestSamplePDFIsWellFormed checks the structure a PDF reader relies on: the
// header, every cross-reference offset pointing at its object, startxref
// pointing at the table, the stream length, and the end marker.
func TestSamplePDFIsWellFormed(t *testing.T) {
	pdf := samplePDF()
	if !bytes.HasPrefix(pdf, []byte("%PDF-1.4\n")) || !bytes.HasSuffix(pdf, []byte("%%EOF\n")) {
		t.Fatal("header or trailer marker missing")
	}
	m := regexp.MustCompile(`startxref\n(\d+)\n%%EOF\n$`).FindSubmatch(pdf)
	if m == nil {
		t.Fatal("no startxref")
	}
	xref, _ := strconv.Atoi(string(m[1]))
	if !bytes.HasPrefix(pdf[xref:], []byte("xref\n0 7\n")) {
		t.Fatalf("startxref %d does not point at the cross-reference table", xref)
	}
	entries := regexp.MustCompile(`(\d{10}) 00000 n \n`).FindAllSubmatch(pdf[xref:], -1)
	if len(entries) != 6 {
		t.Fatalf("%d in-use entries, want 6", len(entries))
	}
	for i, e := range entries {
		off, _ := strconv.Atoi(string(e[1]))
		if want := fmt.Sprintf("%d 0 obj\n", i+1); !bytes.HasPrefix(pdf[off:], []byte(want)) {
			t.Errorf("entry %d points at %q", i+1, pdf[off:off+10])
		}
	}
	sm := regexp.MustCompile(`/Length (\d+) >>\nstream\n`).FindSubmatchIndex(pdf)
	n, _ := strconv.Atoi(string(pdf[sm[2]:sm[3]]))
	if !bytes.HasPrefix(pdf[sm[1]+n:], []byte("endstream")) {
		t.Errorf("stream /Length %d does not end at endstream", n)
	}
}

func TestAccessKey(t *testing.T) {
	k := accessKey()
	if len(k) != 44 || strings.Trim(k, "0123456789") != "" || !strings.Contains(k, supplierCNPJ) {
		t.Fatalf("access key %q: want 44 digits holding the supplier's CNPJ", k)
	}
}
