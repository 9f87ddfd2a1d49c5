package sendurl

import (
	"errors"
	"net/url"
	"testing"
)

func TestBuild(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		pieces   []Piece
		live     string
		record   string // "" means the same as live
	}{
		{"plain", "https://a.example/x?y=1", nil, "https://a.example/x?y=1", ""},
		{"space in the query", "http://host/lit?a=b c", nil, "http://host/lit?a=b%20c", ""},
		{"angle brackets", "https://a.example/q?id=<m@x>", nil, "https://a.example/q?id=%3Cm@x%3E", ""},
		{"every character that may never appear", "https://a.example/ \"<>\\^`{|}", nil, "https://a.example/%20%22%3C%3E%5C%5E%60%7B%7C%7D", ""},
		{"non-ASCII path as UTF-8", "https://a.example/ção", nil, "https://a.example/%C3%A7%C3%A3o", ""},
		{"reserved characters and escapes as written", "https://u:p@a.example:8443/a/b;c=d?e=f&g=h+i,$[x]@:%2F%2f", nil, "https://u:p@a.example:8443/a/b;c=d?e=f&g=h+i,$[x]@:%2F%2f", ""},
		{"a lone percent", "https://a.example/100%?p=%zz&q=%4", nil, "https://a.example/100%25?p=%25zz&q=%254", ""},
		{"fragment dropped", "https://a.example/x?y=1#frag ment", nil, "https://a.example/x?y=1", ""},
		{"international host", "https://bücher.example/ö", nil, "https://xn--bcher-kva.example/%C3%B6", ""},
		{"international host with port and user", "https://ü@BÜCHER.example:8080/", nil, "https://%C3%BC@xn--bcher-kva.example:8080/", ""},
		{"secret piece", "https://a.example/p/my secret token?k=v", []Piece{{20, 35, "[redacted secrets.T]"}},
			"https://a.example/p/my%20secret%20token?k=v", "https://a.example/p/[redacted secrets.T]?k=v"},
		{"whole URL in a secret keeps its structure", "https://h.example/a?b=c d#e", []Piece{{0, 27, "[redacted secrets.U]"}},
			"https://h.example/a?b=c%20d", "[redacted secrets.U]"},
		{"fragment after a secret is not in the record", "https://a.example/#x${{y}}", []Piece{{20, 26, "[redacted secrets.Y]"}},
			"https://a.example/", ""},
		{"percent split across pieces", "https://a.example/%41", []Piece{{18, 19, "[s]"}}, "https://a.example/%41", "https://a.example/[s]41"},
		{"secret inside an international host", "https://sub.bücher.example/", []Piece{{8, 11, "[redacted secrets.S]"}},
			"https://sub.xn--bcher-kva.example/", "https://[redacted secrets.S].xn--bcher-kva.example/"},
	}
	for _, tc := range tests {
		live, record, err := Build(tc.in, tc.pieces)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		want := tc.record
		if want == "" {
			want = tc.live
		}
		if live != tc.live || record != want {
			t.Errorf("%s: Build(%q)\n live   %q, want %q\n record %q, want %q", tc.name, tc.in, live, tc.live, record, want)
		}
		// What is sent parses as is and goes on the wire as is.
		u, err := url.Parse(live)
		if err != nil {
			t.Errorf("%s: %q does not parse: %v", tc.name, live, err)
			continue
		}
		if got := u.Scheme + "://" + u.Host + u.RequestURI(); got != live && u.User == nil {
			t.Errorf("%s: net/url would send %q, not %q", tc.name, got, live)
		}
	}
}

func TestBuildRefuses(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"https://a.example/\tx", "https://a.example/x\x7f", "https://a.example/\x00", "https://a.example/a\nb"} {
		_, _, err := Build(in, nil)
		var ce *ControlError
		if !errors.As(err, &ce) || in[ce.Offset] != ce.Char {
			t.Errorf("Build(%q) = %v, want a *ControlError", in, err)
		}
	}
	_, _, err := Build("https://a\u200d\u0301b.example/", nil)
	var he *HostError
	if !errors.As(err, &he) {
		t.Errorf("an invalid international host: %v, want a *HostError", err)
	}
}

func TestHostSpan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		host string
	}{
		{"https://a.example/x", "a.example"},
		{"https://u:p@a.example:80?x", "a.example:80"},
		{"https://[::1]:80/", "[::1]:80"},
		{"https://", ""},
		{"https:a.example/x", "-"},
		{"${{secrets.U}}", "-"},
		{"1http://a/", "-"},
	} {
		s, e := HostSpan(tc.in)
		got := "-"
		if s >= 0 {
			got = tc.in[s:e]
		}
		if got != tc.host {
			t.Errorf("HostSpan(%q) = %q, want %q", tc.in, got, tc.host)
		}
	}
}
