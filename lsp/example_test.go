package lsp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/textproto"
	"strconv"
	"strings"

	"github.com/kobana/workflow/lsp"
)

// A session as an editor runs it, over one stream: open a document, get its
// diagnostics, shut down. The messages are framed with Content-Length, as
// the Language Server Protocol says.
func ExampleServer_Serve() {
	var in bytes.Buffer
	send := func(msg string) { fmt.Fprintf(&in, "Content-Length: %d\r\n\r\n%s", len(msg), msg) }
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`)
	send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	doc, _ := json.Marshal(`{"result": 1, "workflow": [{"type": "request", "method": "post", "url": "https://erp.example.com/${{secret.TOKEN}}"}]}`)
	send(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///tmp/answer.json","languageId":"json","version":1,"text":` + string(doc) + `}}}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
	send(`{"jsonrpc":"2.0","method":"exit"}`)

	var out bytes.Buffer
	if err := lsp.New(lsp.Options{}).Serve(&in, &out); err != nil {
		fmt.Println(err)
		return
	}
	r := bufio.NewReader(&out)
	for {
		h, err := textproto.NewReader(r).ReadMIMEHeader()
		if err != nil {
			break
		}
		n, _ := strconv.Atoi(h.Get("Content-Length"))
		body := make([]byte, n)
		io.ReadFull(r, body)
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Diagnostics []struct {
					Code    string `json:"code"`
					Message string `json:"message"`
					Range   struct {
						Start struct{ Line, Character int }
					}
				}
			}
		}
		json.Unmarshal(body, &msg)
		if msg.Method != "textDocument/publishDiagnostics" {
			continue
		}
		for _, d := range msg.Params.Diagnostics {
			fmt.Println(d.Range.Start.Line, d.Range.Start.Character, d.Code, strings.SplitN(d.Message, ":", 2)[0])
		}
	}
	// Output:
	// 0 57 method-invalid method "post" must be written in upper case
	// 0 97 placeholder-unknown-namespace unknown namespace "secret" in secret.TOKEN
}
