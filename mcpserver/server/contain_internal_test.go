package server

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kobana/workflow/mcpserver/internal/panics"
)

// A panic after the response began cannot become a 500: the response is
// cut short (the client sees an error, not a body that looks complete),
// the panic is reported once, and a handler's own http.ErrAbortHandler is
// passed on to net/http unreported.
func TestRecoverHTTPAfterTheResponseBegan(t *testing.T) {
	heardc := make(chan *panics.Panic, 10)
	stop := panics.Listen(func(p *panics.Panic) { heardc <- p })
	defer stop()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stream/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		panic("after the header")
	})
	mux.HandleFunc("GET /abort", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
	srv := httptest.NewServer(recoverHTTP(mux))
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/stream/7")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "partial" || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("got %d %q, %v; want 200, the partial body and an unexpected EOF", resp.StatusCode, body, err)
	}
	if _, err := http.Get(srv.URL + "/abort"); err == nil {
		t.Error("a handler aborted with http.ErrAbortHandler was answered")
	}
	srv.Close() // every handler has returned
	close(heardc)
	var heard []*panics.Panic
	for p := range heardc {
		heard = append(heard, p)
	}
	if len(heard) != 1 || heard[0].Surface != panics.HTTP || heard[0].Where != "GET /stream/{id}" || heard[0].Value != "after the header" {
		t.Fatalf("heard %v; want the one panic after the header, on GET /stream/{id}", heard)
	}
}
