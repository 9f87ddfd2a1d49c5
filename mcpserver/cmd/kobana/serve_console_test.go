package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// kobana serve mounts the console on its HTTP listener and says where;
// -no-console leaves it out.
func TestServeConsoleFlags(t *testing.T) {
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, http.StatusSeeOther},
		{[]string{"-console-idle", "5m", "-console-lifetime", "1h"}, http.StatusSeeOther},
		{[]string{"-no-console"}, http.StatusNotFound},
	} {
		db := filepath.Join(t.TempDir(), "c.db")
		var stderr serveBuffer
		addrs, stop := startServe(t, &Command{Stdout: &stderr, Stderr: &stderr}, &stderr, append([]string{"-http", "127.0.0.1:0", "-db", db}, tc.args...)...)
		res, err := noRedirect.Get("http://" + addrs["http"].String() + "/console/")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		stop()
		if res.StatusCode != tc.want {
			t.Errorf("%v: GET /console/ answered %s, want %d", tc.args, res.Status, tc.want)
		}
		if said := strings.Contains(stderr.String(), "console on http://"); said != (tc.want != http.StatusNotFound) {
			t.Errorf("%v: the notices say the console's address: %v\n%s", tc.args, said, stderr.String())
		}
	}
}
