package executor_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/runrecord"
)

// fault is what a faulty receiver does once it has read a whole request.
type fault string

const (
	answer     fault = "answer"      // a complete 200 response
	reset      fault = "reset"       // reset the connection (HTTP/2: the stream, PROTOCOL_ERROR)
	headers    fault = "headers"     // the response's headers, announcing a body, then close
	halfStatus fault = "half status" // half a status line (HTTP/2: half a frame), then close
	stall      fault = "stall"       // nothing, until the test ends
)

// faulty is a receiver on loopback that speaks HTTP/1.1 on raw TCP, or
// HTTP/2 over TLS, reads each request whole, counts it and then does what
// its plan says for that request: the n-th request (from 1) gets plan[n-1],
// and every request after the plan gets the plan's last fault.
type faulty struct {
	ln       net.Listener
	plan     []fault
	arrivals atomic.Int64 // whole requests read
	conns    atomic.Int64 // connections accepted
	mu       sync.Mutex
	on       []int64 // the connection (from 1) each request came on
	done     chan struct{}
	wg       sync.WaitGroup
}

func newFaulty(t *testing.T, h2 bool, plan ...fault) *faulty {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &faulty{ln: ln, plan: plan, done: make(chan struct{})}
	if h2 {
		f.ln = tls.NewListener(ln, receiverTLS(t))
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			c, err := f.ln.Accept()
			if err != nil {
				return
			}
			id := f.conns.Add(1)
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				defer c.Close()
				stop := context.AfterFunc(t.Context(), func() { c.Close() })
				defer stop()
				if h2 {
					f.serveH2(c, id)
				} else {
					f.serveH1(c, id)
				}
			}()
		}
	}()
	t.Cleanup(func() {
		close(f.done)
		f.ln.Close()
	})
	return f
}

// receiverTLS is a TLS configuration that offers HTTP/2 with the test
// server certificate of net/http/httptest.
func receiverTLS(t *testing.T) *tls.Config {
	s := httptest.NewUnstartedServer(http.NotFoundHandler())
	s.EnableHTTP2 = true
	s.StartTLS()
	cfg := s.TLS.Clone()
	s.Close()
	cfg.NextProtos = []string{"h2"}
	return cfg
}

// next counts a whole request that came on conn and returns what to do
// with it.
func (f *faulty) next(conn int64) fault {
	f.mu.Lock()
	f.on = append(f.on, conn)
	f.mu.Unlock()
	n := int(f.arrivals.Add(1))
	return f.plan[min(n, len(f.plan))-1]
}

func (f *faulty) serveH1(c net.Conn, conn int64) {
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return
		}
		switch f.next(conn) {
		case answer:
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			continue
		case reset:
			c.(*net.TCPConn).SetLinger(0)
		case headers:
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")
		case halfStatus:
			io.WriteString(c, "HTTP/1.1 2")
		case stall:
			<-f.done
		}
		return
	}
}

func (f *faulty) serveH2(c net.Conn, conn int64) {
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil {
		return
	}
	fr := http2.NewFramer(c, c)
	if fr.WriteSettings() != nil {
		return
	}
	respond := func(id uint32, status string, length string, end bool) {
		var buf bytes.Buffer
		enc := hpack.NewEncoder(&buf)
		enc.WriteField(hpack.HeaderField{Name: ":status", Value: status})
		enc.WriteField(hpack.HeaderField{Name: "content-length", Value: length})
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: buf.Bytes(), EndHeaders: true})
	}
	for {
		frame, err := fr.ReadFrame()
		if err != nil {
			return
		}
		var id uint32
		switch fm := frame.(type) {
		case *http2.SettingsFrame:
			if !fm.IsAck() {
				fr.WriteSettingsAck()
			}
			continue
		case *http2.HeadersFrame:
			if !fm.StreamEnded() {
				continue
			}
			id = fm.StreamID
		case *http2.DataFrame:
			if !fm.StreamEnded() {
				continue
			}
			id = fm.StreamID
		default:
			continue
		}
		switch f.next(conn) {
		case answer:
			respond(id, "200", "2", false)
			fr.WriteData(id, true, []byte("ok"))
			continue
		case reset:
			fr.WriteRSTStream(id, http2.ErrCodeProtocol)
			continue
		case headers:
			respond(id, "200", "10", false)
		case halfStatus:
			// A HEADERS frame header announcing 64 bytes, and 3 of them.
			c.Write([]byte{0, 0, 64, byte(http2.FrameHeaders), 0x4, 0, 0, 0, byte(id), 0x88, 0x0f, 0x10})
		case stall:
			<-f.done
		}
		return
	}
}

// stepJournal gives each step an identity and keeps the final records.
type stepJournal struct {
	mu   sync.Mutex
	done []runrecord.Step
}

func (*stepJournal) Identity(i int) string                         { return runrecord.StepID("wrun_once", i) }
func (*stepJournal) Sending(context.Context, runrecord.Step) error { return nil }
func (j *stepJournal) Done(_ context.Context, s runrecord.Step) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.done = append(j.done, s)
	return nil
}

// Each receiver that reads a whole request and then fails to answer it
// gets that request once, on a fresh connection and on one a first step
// already used, over HTTP/1.1 and HTTP/2, whatever the method — GET, or a
// POST with its Idempotency-Key, both of which net/http would send again
// on its own — and the step is recorded unknown, with its identity, for a
// person to resume: the receiver may have acted on it.
func TestAStepIsSentOnceToAReceiverThatNeverAnswers(t *testing.T) {
	faults := []struct {
		fault  fault
		reason runrecord.Reason
	}{
		{reset, runrecord.ReasonTransport},
		{headers, runrecord.ReasonTransport},
		{halfStatus, runrecord.ReasonTransport},
		{stall, runrecord.ReasonTimeout},
	}
	steps := map[string]string{
		"GET":  `{"type":"request","method":"GET","url":"%s/orders/1"}`,
		"POST": `{"type":"request","method":"POST","url":"%s/orders","body":{"n":1}}`,
	}
	for _, proto := range []string{"HTTP/1.1", "HTTP/2"} {
		for _, fc := range faults {
			for _, reused := range []bool{false, true} {
				for method, step := range steps {
					conn := "fresh"
					if reused {
						conn = "reused"
					}
					t.Run(fmt.Sprintf("%s/%s/%s/%s", proto, fc.fault, conn, method), func(t *testing.T) {
						h2 := proto == "HTTP/2"
						plan, scheme := []fault{fc.fault}, "http://erp.example"
						if reused {
							plan = []fault{answer, fc.fault}
						}
						if h2 {
							scheme = "https://erp.example"
						}
						rv := newFaulty(t, h2, plan...)
						g := allowLoopback()
						ex := executor.New(executor.Options{Guard: g, StepTimeout: time.Second,
							Network: guard.Network{Dial: g.DialTo(rv.ln.Addr().String()), TLS: &tls.Config{InsecureSkipVerify: true}}})
						workflow := fmt.Sprintf(step, scheme)
						if reused {
							workflow = fmt.Sprintf(`{"type":"request","url":"%s/ping"},`, scheme) + workflow
						}
						j := &stepJournal{}
						rec := ex.Run(t.Context(), compilePlan(t, `{"result":1,"workflow":[`+workflow+`]}`), executor.Env{Journal: j})
						last := rec.Steps[len(rec.Steps)-1]
						if got, want := rv.arrivals.Load(), int64(len(rec.Steps)); got != want {
							t.Errorf("the receiver got %d requests for %d steps", got, want)
						}
						rv.mu.Lock()
						on := fmt.Sprint(rv.on)
						rv.mu.Unlock()
						if reused && (rec.Steps[0].State != runrecord.Succeeded || on != "[1 1]") {
							t.Errorf("the first step %s %s; the requests came on connections %s, not both on one", rec.Steps[0].State, rec.Steps[0].Error, on)
						}
						if last.State != runrecord.Unknown || last.Reason != fc.reason || last.ID != runrecord.StepID("wrun_once", last.Index) {
							t.Errorf("the step is recorded %s %s (id %q): %s", last.State, last.Reason, last.ID, last.Error)
						}
						if !strings.Contains(last.Error, "not sent again on its own") {
							t.Errorf("error %q", last.Error)
						}
						if runrecord.ResumePoint(rec.Steps) != last.Index {
							t.Errorf("a resume would start at %d", runrecord.ResumePoint(rec.Steps))
						}
					})
				}
			}
		}
	}
}

// A request that provably never reached its receiver — the connection
// refused, or closed during the TLS handshake — is failed, not unknown: no
// byte of it left.
func TestAStepThatNeverLeftIsFailed(t *testing.T) {
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedAddr := refused.Addr().String()
	refused.Close()
	handshake, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { handshake.Close() })
	var accepted atomic.Int64
	go func() {
		for {
			c, err := handshake.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}
	}()
	for name, addr := range map[string]string{"refused": refusedAddr, "TLS handshake": handshake.Addr().String()} {
		t.Run(name, func(t *testing.T) {
			g := allowLoopback()
			ex := executor.New(executor.Options{Guard: g, Network: guard.Network{Dial: g.DialTo(addr), TLS: &tls.Config{InsecureSkipVerify: true}}})
			rec := ex.Run(t.Context(), compilePlan(t, `{"result":1,"workflow":[{"type":"request","method":"POST","url":"https://erp.example/orders","body":{"n":1}}]}`), executor.Env{Journal: &stepJournal{}})
			if s := rec.Steps[0]; s.State != runrecord.Failed || s.Reason != runrecord.ReasonTransport {
				t.Errorf("the step is recorded %s %s: %s", s.State, s.Reason, s.Error)
			}
		})
	}
	if accepted.Load() == 0 {
		t.Error("the TLS receiver saw no connection")
	}
}
