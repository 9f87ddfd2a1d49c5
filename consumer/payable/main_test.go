package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func TestPayable(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.Host+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		if r.URL.Path == "/payables" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"data":{"id":"pay_7"}}`)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/attachments") {
			if _, h, err := r.FormFile("file"); err != nil || h.Filename != "DANFE-4521.pdf" {
				http.Error(w, "no file", http.StatusBadRequest)
				return
			}
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	var out bytes.Buffer
	if code := run(t.Context(), []string{srv.Listener.Addr().String()}, &out); code != 0 {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	want := []string{
		"POST erp.example.com/payables Bearer tok-1",
		"POST erp.example.com/payables/pay_7/attachments Bearer tok-1",
		"POST hooks.example.com/T1/B2 ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the receiver got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
