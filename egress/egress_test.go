package egress

import (
	"encoding/json"
	"strings"
	"testing"
)

func target(t *testing.T, u string) Target {
	t.Helper()
	tg, ok := ParseTarget(u)
	if !ok {
		t.Fatalf("ParseTarget(%q) found no target", u)
	}
	return tg
}

func TestParse(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"ERP.Example.COM.":         "erp.example.com",
		" erp.example.com:8443 ":   "erp.example.com:8443",
		"*.Example.com":            "*.example.com",
		"*":                        "*",
		"192.0.2.7":                "192.0.2.7",
		"[2001:DB8::1]:8443":       "[2001:db8::1]:8443",
		"bücher.example":           "xn--bcher-kva.example",
		"hooks.slack.com":          "hooks.slack.com",
		"*.internal.example.com:1": "*.internal.example.com:1",
	} {
		p, err := Parse(in)
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		if p.String() != want {
			t.Errorf("Parse(%q) = %s, want %s", in, p, want)
		}
	}
	for in, why := range map[string]string{
		"":                         "empty",
		"https://erp.example.com":  "not a URL",
		"erp.example.com/payables": "paths",
		"user@erp.example.com":     "user names",
		"erp.*.com":                `"*" may only`,
		"*.com":                    "top-level domain",
		"*.192.0.2.7":              "IP address",
		"erp.example.com:0":        "port",
		"erp.example.com:99999":    "port",
		"2001:db8::1":              "brackets",
		"[erp.example.com]":        "not an IPv6",
		"erp..example.com":         "empty label",
		"erp$.example.com":         "no host name",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("Parse(%q) = %v, want an error saying %q", in, err, why)
		}
	}
}

func TestMatches(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pattern, url string
		want         bool
	}{
		{"erp.example.com", "https://erp.example.com/payables", true},
		{"erp.example.com", "https://ERP.example.com./x", true},
		{"erp.example.com", "http://erp.example.com:8080/x", true},
		{"erp.example.com", "https://erp.example.com.evil.example/x", false},
		{"erp.example.com", "https://evil-erp.example.com/x", false},
		{"erp.example.com:443", "https://erp.example.com/x", true},
		{"erp.example.com:443", "http://erp.example.com/x", false},
		{"erp.example.com:8443", "https://erp.example.com:8443/x", true},
		{"*.example.com", "https://a.b.example.com/x", true},
		{"*.example.com", "https://example.com/x", false},
		{"*.example.com", "https://badexample.com/x", false},
		{"[2001:db8::1]", "https://[2001:db8:0::1]:9/x", true},
		{"xn--bcher-kva.example", "https://bücher.example/x", true},
		{"*", "https://anything.example/x", true},
	}
	for _, c := range cases {
		p, err := Parse(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Matches(target(t, c.url)); got != c.want {
			t.Errorf("%s matches %s: %v, want %v", c.pattern, c.url, got, c.want)
		}
	}
}

func TestBindURL(t *testing.T) {
	t.Parallel()
	d, ok := BindURL("https://hooks.slack.com/services/T000/B000/XXXX")
	if !ok || d.String() != "hooks.slack.com" {
		t.Errorf("BindURL of a webhook URL = %v, %v", d, ok)
	}
	d, ok = BindURL("http://127.0.0.1:9000/hook")
	if !ok || d.String() != "127.0.0.1:9000" {
		t.Errorf("BindURL with a port = %v, %v", d, ok)
	}
	for _, v := range []string{"sk-live-123", "ftp://files.example/x", "https:///nohost", "erp.example.com"} {
		if _, ok := BindURL(v); ok {
			t.Errorf("BindURL(%q) binds a value that is not an http(s) URL with a host", v)
		}
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	egress := MustParseList("erp.example.com", "hooks.slack.com")
	p := &Policy{
		Secrets:  map[string]Destinations{"FINANCE_TOKEN": MustParseList("erp.example.com")},
		Egress:   &egress,
		EgressOf: "agent Invoices (agt_1)",
	}
	p.BindURLs(map[string]string{"SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/x", "FINANCE_TOKEN": "https://not-used.example/", "PIN": "1234"})
	if d, _ := p.Destinations("SLACK_WEBHOOK_URL"); d.String() != "hooks.slack.com" {
		t.Errorf("the webhook URL secret is bound to %v", d)
	}
	if d, _ := p.Destinations("FINANCE_TOKEN"); d.String() != "erp.example.com" {
		t.Errorf("BindURLs replaced the declared destinations: %v", d)
	}
	if _, bound := p.Destinations("PIN"); bound {
		t.Error("a secret that is not a URL was bound")
	}

	if vs := p.Check(target(t, "https://erp.example.com/payables"), []string{"FINANCE_TOKEN", "PIN"}); vs != nil {
		t.Errorf("allowed request refused: %v", vs)
	}
	vs := p.Check(target(t, "https://evil.example/collect"), []string{"SLACK_WEBHOOK_URL", "FINANCE_TOKEN", "PIN", "FINANCE_TOKEN"})
	want := []string{
		"evil.example is outside the egress list of agent Invoices (agt_1), which allows erp.example.com, hooks.slack.com",
		"secret FINANCE_TOKEN may be sent only to erp.example.com; evil.example is not one of its destinations",
		"secret SLACK_WEBHOOK_URL may be sent only to hooks.slack.com; evil.example is not one of its destinations",
	}
	if len(vs) != len(want) {
		t.Fatalf("violations %v, want %d", vs, len(want))
	}
	for i, v := range vs {
		if v.Error() != want[i] {
			t.Errorf("violation %d: %q, want %q", i, v.Error(), want[i])
		}
	}
	if err := Error(vs); err == nil || !strings.Contains(err.Error(), "; secret FINANCE_TOKEN") {
		t.Errorf("Error joins the violations: %v", err)
	}
	// A secret bound elsewhere travelling to a host egress allows.
	if vs := p.Check(target(t, "https://hooks.slack.com/services/x"), []string{"FINANCE_TOKEN"}); len(vs) != 1 || vs[0].Secret != "FINANCE_TOKEN" {
		t.Errorf("FINANCE_TOKEN to Slack: %v", vs)
	}
	var nilPolicy *Policy
	if nilPolicy.Check(target(t, "https://evil.example/"), []string{"X"}) != nil || nilPolicy.Restricts() {
		t.Error("a nil policy refuses")
	}
	none := Destinations{}
	if vs := (&Policy{Egress: &none}).Check(target(t, "https://erp.example.com/"), nil); len(vs) != 1 || !strings.Contains(vs[0].Error(), "allows no destination") {
		t.Errorf("an empty egress list: %v", vs)
	}
}

func TestParsePolicy(t *testing.T) {
	t.Parallel()
	p, err := ParsePolicy([]byte(`{"secrets": {"FINANCE_TOKEN": ["ERP.example.com"]}, "egress": []}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Egress == nil || len(*p.Egress) != 0 || p.Secrets["FINANCE_TOKEN"].String() != "erp.example.com" {
		t.Errorf("parsed %+v", p)
	}
	b, _ := json.Marshal(p)
	if string(b) != `{"secrets":{"FINANCE_TOKEN":["erp.example.com"]},"egress":[]}` {
		t.Errorf("encoded %s", b)
	}
	p, err = ParsePolicy([]byte(`{"secrets": {}}`))
	if err != nil || p.Egress != nil {
		t.Errorf("no egress key: %+v %v", p, err)
	}
	for doc, why := range map[string]string{
		`{"secret": {}}`: "unknown field",
		`{"secrets": {"X": ["https://a.example"]}}`: "secrets.X: [0]: destination",
		`{"egress": "erp.example.com"}`:             "egress: destinations are a list",
	} {
		if _, err := ParsePolicy([]byte(doc)); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("ParsePolicy(%s) = %v, want %q", doc, err, why)
		}
	}
}
