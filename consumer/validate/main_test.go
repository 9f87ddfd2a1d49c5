package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestValidate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "answer.json")
	doc := "{\"result\": 1, \"workflow\": [\n  {\"type\": \"request\", \"method\": \"post\", \"url\": \"https://erp.example.com/x\",\n   \"headers\": {\"Authorization\": \"Bearer ${{secrets.FINANCE_TOKN}}\"}}]}"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := run([]string{path, "FINANCE_TOKEN"}, &out); code != 1 {
		t.Errorf("exit %d; want 1", code)
	}
	want := path + ":2:33: error method-invalid: method \"post\" must be written in upper case: \"POST\"\n" +
		path + ":3:41: error secrets-unknown-name: secret \"FINANCE_TOKN\" is not among the workspace's secrets (FINANCE_TOKEN), so the step would fail before sending; did you mean ${{secrets.FINANCE_TOKEN}}?\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
