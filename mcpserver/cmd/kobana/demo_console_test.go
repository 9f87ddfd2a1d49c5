package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
)

// With -serve the demo keeps its server serving once the run is done, and
// prints its console's address with a one-time code that signs in and
// shows the e-mail the demo just sent; Ctrl-C (the context) ends it.
func TestDemoServesTheConsole(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errb syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		c := &Command{Stdout: &out, Stderr: &errb, Context: ctx}
		done <- c.Main([]string{"demo", "-serve"})
	}()
	line := regexp.MustCompile(`Its console: (http://\S+/console/)\nsign in with the one-time code (kbs_[0-9a-f]+) `)
	var m []string
	if err := testwait.Until(2*time.Minute, func() error {
		if m = line.FindStringSubmatch(out.String()); m == nil {
			return fmt.Errorf("no console address yet:\n%s%s", out.String(), errb.String())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	res, err := client.Get(m[1] + "signin")
	if err != nil {
		t.Fatal(err)
	}
	form, _ := io.ReadAll(res.Body)
	res.Body.Close()
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(form)
	if csrf == nil {
		t.Fatalf("no sign-in form at %s: %s", m[1], form)
	}
	res, err = client.PostForm(m[1]+"signin", url.Values{"csrf": {string(csrf[1])}, "code": {m[2]}})
	if err != nil {
		t.Fatal(err)
	}
	list, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.Request.URL.Path != "/console/emails" || !strings.Contains(string(list), "Nota fiscal eletrônica 4521") {
		t.Fatalf("signed in with the printed code: %s at %s\n%s", res.Status, res.Request.URL, list)
	}
	cancel()
	if status := <-done; status != exitOK {
		t.Fatalf("exit %d after the interrupt\n%s%s", status, out.String(), errb.String())
	}
}
