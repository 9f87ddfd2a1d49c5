package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/resolve/eml"
)

func TestSelfTest(t *testing.T) {
	var out, errb bytes.Buffer
	if status := run([]string{"-eml", "../emails/acme-invoice.eml"}, &out, &errb); status != 0 {
		t.Fatalf("exit %d\n%s\n%s", status, out.String(), errb.String())
	}
	m, err := eml.Open("../emails/acme-invoice.eml")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := m.Open(0)
	pdf, _ := io.ReadAll(r)
	r.Close()
	sum := sha256.Sum256(pdf)
	for _, want := range []string{
		`filename "DANFE-4521.pdf", declared application/pdf, bytes say application/pdf, 1168 bytes`,
		"sha256 " + hex.EncodeToString(sum[:]),
		`field "kobana_email_id" "em_1001"`,
		"exactly the Content-Length",
		"the sender recorded: step 0 succeeded",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestReceiverRejects(t *testing.T) {
	var out bytes.Buffer
	srv := httptest.NewServer(&receiver{out: &out})
	defer srv.Close()
	post := func(declared string, data []byte) int {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="file"; filename="nota.pdf"`)
		h.Set("Content-Type", declared)
		pw, _ := mw.CreatePart(h)
		pw.Write(data)
		mw.Close()
		resp, err := http.Post(srv.URL+"/payables/pay_1/attachments", mw.FormDataContentType(), &body)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post("application/pdf", []byte("%PDF-1.4\n%%EOF\n")); got != http.StatusCreated {
		t.Errorf("a PDF: %d", got)
	}
	if got := post("application/pdf", []byte("MZ\x90\x00\x03 an executable")); got != http.StatusUnprocessableEntity || !strings.Contains(out.String(), "declared application/pdf but its bytes are application/octet-stream") {
		t.Errorf("a disguised file: %d\n%s", got, out.String())
	}
	resp, err := http.Post(srv.URL+"/payables/pay_1/attachments", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a JSON body: %d", resp.StatusCode)
	}
}

func TestServeStopsWithContext(t *testing.T) {
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if status := (&receiver{out: &out}).serve(ctx, "127.0.0.1:0", &errb); status != 0 || !strings.Contains(out.String(), "receiver listening on http://127.0.0.1:") {
		t.Errorf("exit %d: %s %s", status, out.String(), errb.String())
	}
}
