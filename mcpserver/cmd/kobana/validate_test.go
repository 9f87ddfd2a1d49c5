package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kobana/workflow/compile/lint"
)

// TestValidateIsTheLinter checks that `kobana validate` prints what the
// shared linter prints and exits the same way, flags included.
func TestValidateIsTheLinter(t *testing.T) {
	const ex = "../../../examples/workflows/"
	tests := []struct {
		args []string
		want int
	}{
		{[]string{ex + "payable.json", ex + "attachment-multipart.json"}, 0},
		{[]string{ex + "invalid/method-invalid.json"}, 1},
		{[]string{"-format", "json", ex + "invalid/header-reserved.json", ex + "attachment-base64.json"}, 1},
		{[]string{"-format", "sarif", ex + "invalid/json-syntax.json"}, 1},
		{[]string{ex + "invalid/workflow-empty.json"}, 0},
		{[]string{"-strict", ex + "invalid/workflow-empty.json"}, 1},
		{[]string{"-stdin-name", "x.json", "-"}, 1},
		{[]string{"no-such-file.json"}, 2},
		{[]string{"-format", "yaml", ex + "payable.json"}, 2},
		{nil, 2},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			c := &Command{Stdin: strings.NewReader(`{"result": 1, "workflow": {}}`), Stdout: &out, Stderr: &errb}
			status := c.Main(append([]string{"validate"}, tc.args...))
			var wantOut, wantErr bytes.Buffer
			cli := lint.CLI{Name: "kobana validate", Stdin: strings.NewReader(`{"result": 1, "workflow": {}}`), Stdout: &wantOut, Stderr: &wantErr}
			want := cli.Run(tc.args)
			if status != tc.want || want != tc.want {
				t.Errorf("exit %d (linter %d), want %d; stderr %s", status, want, tc.want, errb.String())
			}
			if out.String() != wantOut.String() || errb.String() != wantErr.String() {
				t.Errorf("output differs from the linter's:\n%s%s\nwant\n%s%s", out.String(), errb.String(), wantOut.String(), wantErr.String())
			}
			if status == 2 && !strings.HasPrefix(errb.String(), "kobana validate: ") {
				t.Errorf("stderr %q does not name the command", errb.String())
			}
		})
	}
}
