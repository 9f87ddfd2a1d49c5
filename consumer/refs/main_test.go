package main

import (
	"bytes"
	"testing"
)

func TestRefs(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"${{secrets.ERP}}/p/${{steps.0.response.body.data.id}} ${{secret.X}}"}, &out); code != 1 {
		t.Errorf("exit %d; want 1 (one reference is invalid)", code)
	}
	want := "0-16 secrets secrets.ERP\n19-53 steps steps.0.response.body.data.id\n" +
		"offset 54: unknown namespace \"secret\" in secret.X: a reference starts with secrets, kobana, steps or email; did you mean \"${{secrets.X}}\"?\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
