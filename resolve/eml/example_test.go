package eml_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/kobana/workflow/resolve/eml"
)

func ExampleOpen() {
	m, err := eml.Open("testdata/nested.eml")
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range m.Attachments() {
		fmt.Printf("%d %s %s %d\n", a.Index, a.Filename, a.ContentType, a.Size)
	}
	// Output:
	// 0 logo.png image/png 70
	// 1 nota fiscalç.pdf application/pdf 329
	// 2 NFe35260512345678000190550010000000421000000428.xml text/xml 412
	// 3 boletos.csv text/csv 81
}

func ExampleMessage_Open() {
	m, err := eml.Open("testdata/nested.eml")
	if err != nil {
		log.Fatal(err)
	}
	r, err := m.Open(3)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	lines := bufio.NewScanner(r) // the CSV's lines end in CRLF
	for lines.Scan() {
		fmt.Println(lines.Text())
	}
	if err := lines.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// nosso_numero;vencimento;valor
	// 00042;2026-12-10;1250.50
	// 00043;2026-12-15;87.90
}

// A source other than a file: anything read by byte ranges, such as a
// database large object or bytes in memory. The index a service computes
// when the message arrives is stored as JSON; a later run reads only the
// attachment it sends.
func ExampleNewIndexed() {
	stored, err := os.ReadFile("testdata/forwarded.eml")
	if err != nil {
		log.Fatal(err)
	}
	// On arrival: one pass, digests included.
	ix, err := eml.ReadIndex(bytes.NewReader(stored), int64(len(stored)))
	if err != nil {
		log.Fatal(err)
	}
	saved, _ := json.Marshal(ix)

	// In a run: the stored index, and the message read by ranges.
	var loaded eml.Index
	if err := json.Unmarshal(saved, &loaded); err != nil {
		log.Fatal(err)
	}
	m, err := eml.NewIndexed(bytes.NewReader(stored), int64(len(stored)), &loaded)
	if err != nil {
		log.Fatal(err)
	}
	a, _ := m.Attachment(0)
	r, err := m.Open(0)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.Filename, a.ContentType, n == a.Size, fmt.Sprintf("%x", h.Sum(nil)) == a.SHA256)
	// Output:
	// NF 123_2026 - cobrança.eml message/rfc822 true true
}

func ExampleIndexError() {
	m, err := eml.Open("testdata/single-pdf.eml")
	if err != nil {
		log.Fatal(err)
	}
	_, err = m.Open(5)
	var missing *eml.IndexError
	if errors.As(err, &missing) {
		fmt.Println(err)
	}
	_, err = eml.Open("testdata/purged.eml")
	fmt.Println(errors.Is(err, eml.ErrUnreadable))
	// Output:
	// email has 1 attachment; attachment 5 does not exist
	// true
}

func ExampleInferType() {
	fmt.Println(eml.InferType("NFe3526.XML"))
	fmt.Println(eml.InferType("CB301100.REM"))
	fmt.Println(eml.InferType("programa.exe"))
	// Output:
	// application/xml
	// text/plain
	// application/octet-stream
}
