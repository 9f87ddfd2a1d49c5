package plan_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/plan"
)

// trapTransport fails the test when anything sends through it.
type trapTransport struct{ t *testing.T }

func (tr trapTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	tr.t.Errorf("the plan sent %s %s", r.Method, r.URL)
	return nil, errors.New("no request may be sent while planning")
}

// TestMakeOpensNoConnection plans every golden document, and one aimed at a
// live listener the guard allows, with the default transport and resolver
// replaced by traps that fail the test: a plan sends nothing and looks up
// nothing. The listener proves no other path connected: a connection made
// while planning would wait in its accept queue.
func TestMakeOpensNoConnection(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	defaultTransport, defaultResolver := http.DefaultTransport, net.DefaultResolver
	http.DefaultTransport = trapTransport{t}
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		t.Errorf("the plan looked up a name through %s %s", network, address)
		return nil, errors.New("no name may be looked up while planning")
	}}
	defer func() { http.DefaultTransport, net.DefaultResolver = defaultTransport, defaultResolver }()

	live := `{"workflow":[
	 {"type":"request","url":"http://` + ln.Addr().String() + `/payables","body":{"a":"${{secrets.T}}"}},
	 {"type":"request","url":"http://localhost:` + strings.Split(ln.Addr().String(), ":")[1] + `/x/${{steps.0.response.body.id}}"},
	 {"type":"request","method":"GET","url":"https://erp.example.com/lookup-me"}]}`
	allow := &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}
	p := plan.Make(context.Background(), []byte(live), plan.Inputs{Guard: allow, Responses: map[int]*plan.Response{0: {Status: 201, Body: []byte(`{"id":"p1"}`)}}})
	if p.Summary.Send != 3 {
		t.Fatalf("the live document's plan: %+v", p.Summary)
	}
	if p.Steps[1].Request.Host.Check != plan.HostAllowed || p.Steps[2].Request.Host.Check != plan.HostAtSend {
		t.Errorf("host checks: %+v / %+v", p.Steps[1].Request.Host, p.Steps[2].Request.Host)
	}

	docs, _ := filepath.Glob("testdata/*.json")
	for _, path := range docs {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		if strings.Contains(name, ".") {
			continue
		}
		doc, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		in := inputs(t, name)
		in.Lookup = nil
		plan.Make(context.Background(), doc, in)
	}

	ln.(*net.TCPListener).SetDeadline(time.Now())
	if c, err := ln.Accept(); err == nil {
		c.Close()
		t.Error("something connected to the listener while planning")
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Errorf("accept: %v", err)
	}
}
