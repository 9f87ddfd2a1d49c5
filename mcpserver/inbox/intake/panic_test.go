package intake_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kobana/workflow/mcpserver/inbox/intake"
	"github.com/kobana/workflow/mcpserver/internal/panics"
)

// A panic in a session — in the session's Data (DATA, and BDAT's Data,
// which go-smtp runs in a goroutine of its own), or in the wire below
// go-smtp, where go-smtp has no recover — ends that session with 421 4.3.0,
// is reported with its stack on the SMTP surface, and the server goes on:
// the next session's message is stored.
func TestSMTPPanicEndsOnlyItsSession(t *testing.T) {
	e := startSMTP(t, intake.Config{})
	var heard atomic.Int64
	var stacks atomic.Value
	stop := panics.Listen(func(p *panics.Panic) {
		if p.Surface == panics.SMTP {
			heard.Add(1)
			stacks.Store(string(p.Stack))
		}
	})
	defer stop()
	for _, tc := range []struct {
		name, point string
		run         func(k *conn)
	}{
		{"DATA", "data", func(k *conn) {
			k.send("EHLO c\r\nMAIL FROM:<billing@supplier.test>\r\nRCPT TO:<invoices@in.kobana.test>\r\nDATA\r\n")
			for _, want := range []string{"250", "250", "250", "354"} {
				k.expect(want)
			}
			k.send(message("panics", 10) + ".\r\n")
		}},
		{"BDAT", "data", func(k *conn) {
			k.send("EHLO c\r\nMAIL FROM:<billing@supplier.test>\r\nRCPT TO:<invoices@in.kobana.test>\r\nBDAT 5 LAST\r\nhello")
			for _, want := range []string{"250", "250", "250"} {
				k.expect(want)
			}
		}},
		{"the wire", "read", func(k *conn) {
			// go-smtp is reading already: the NOOP is answered, and the
			// wire's next read panics.
			k.send("NOOP\r\n")
			k.expect("250")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := dial(t, e.addr)
			var armed atomic.Bool
			armed.Store(true)
			restore := intake.SetTestHook(func(point string) {
				if point == tc.point && armed.CompareAndSwap(true, false) {
					panic("injected in " + point)
				}
			})
			defer restore()
			before := panics.Count(panics.SMTP)
			k.t = t
			tc.run(k)
			k.expect("421 4.3.0")
			if _, err := k.r.ReadByte(); err == nil {
				t.Fatal("the connection stayed open after 421")
			}
			if got := panics.Count(panics.SMTP) - before; got != 1 {
				t.Fatalf("%d panics counted on the SMTP surface, want 1", got)
			}
			if s, _ := stacks.Load().(string); !strings.Contains(s, "intake") {
				t.Fatalf("the panic was reported without its stack: %q", s)
			}
			// The server goes on.
			n := len(e.rec.deliveries())
			k2 := dial(t, e.addr)
			k2.send("EHLO c\r\nMAIL FROM:<billing@supplier.test>\r\nRCPT TO:<invoices@in.kobana.test>\r\nDATA\r\n")
			for _, want := range []string{"250", "250", "250", "354"} {
				k2.expect(want)
			}
			k2.send(message("after the panic", 10) + ".\r\n")
			k2.expect("250 2.0.0")
			if got := len(e.rec.deliveries()); got != n+1 {
				t.Fatalf("%d messages stored after the panic, want %d", got, n+1)
			}
		})
	}
	if heard.Load() != 3 {
		t.Fatalf("the listener heard %d panics, want 3", heard.Load())
	}
}
