package intake_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/kobana/workflow/mcpserver/inbox"
)

// floorBackend is the floor the intake is measured against: a bare go-smtp
// server that writes each message to a file (and, with sync, fsyncs it, as
// any server that answers 250 for a durable message must).
type floorBackend struct {
	dir  string
	sync bool
}

func (b floorBackend) NewSession(*smtp.Conn) (smtp.Session, error) { return &floorSession{b}, nil }

type floorSession struct{ b floorBackend }

func (*floorSession) Reset()                               {}
func (*floorSession) Logout() error                        { return nil }
func (*floorSession) Mail(string, *smtp.MailOptions) error { return nil }
func (*floorSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (s *floorSession) Data(r io.Reader) error {
	f, err := os.CreateTemp(s.b.dir, "msg-*.eml")
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.Copy(f, r); err != nil {
		return err
	}
	if s.b.sync {
		return f.Sync()
	}
	return nil
}

func serveFloor(tb testing.TB, sync bool) string {
	tb.Helper()
	srv := smtp.NewServer(floorBackend{dir: tb.TempDir(), sync: sync})
	srv.Domain = "floor.test"
	srv.ErrorLog = log.New(io.Discard, "", 0)
	srv.MaxMessageBytes = 25 << 20
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// startBenchStore is startStore with a monthly quota no benchmark reaches:
// every message measured is accepted (counted against the quota, given an
// agent job), never refused for the test workspace's plan.
func startBenchStore(b *testing.B) *storeEnv {
	b.Helper()
	e := startStore(b)
	ctx := context.Background()
	repo := inbox.NewRepo(e.st)
	ws, err := repo.Workspaces.Get(ctx, wsID, wsID)
	if err != nil {
		b.Fatal(err)
	}
	ws.Limits.EmailsPerMonth = 1 << 30
	if err := repo.Workspaces.Put(ctx, wsID, ws); err != nil {
		b.Fatal(err)
	}
	return e
}

// uniqueMessages gives each message sent its own Message-ID (copies of one
// message would be recorded as duplicates of the first).
type uniqueMessages struct {
	msg string
	n   atomic.Int64
}

func (u *uniqueMessages) next() string {
	return strings.Replace(u.msg, "<bench@supplier.test>", fmt.Sprintf("<bench-%d@supplier.test>", u.n.Add(1)), 1)
}

// sendParallel sends msg b.N times (each with its own Message-ID) over
// conns connections at once.
func sendParallel(b *testing.B, addr, to, msg string, conns int) {
	u := &uniqueMessages{msg: msg}
	b.SetBytes(int64(len(msg)))
	b.SetParallelism((conns + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c, err := smtp.Dial(addr)
		if err != nil {
			b.Error(err)
			return
		}
		defer c.Close()
		for pb.Next() {
			if err := c.SendMail("billing@supplier.test", []string{to}, strings.NewReader(u.next())); err != nil {
				b.Error(err)
				return
			}
		}
		c.Quit()
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkIntake: messages with a 100 KiB attachment through the SMTP
// intake into durable storage (file synced, e-mail record, event and agent
// job committed in SQLite), next to the floor of a bare go-smtp server
// writing each message to a file, with and without fsync. Each iteration
// sends one message to each of the three servers in turn over their own
// connection, so a change in the machine's load falls on all three alike;
// the metrics are each server's messages per second and the intake's ratio
// to each floor. Goal: intake ≥ 0.5× floor.
func BenchmarkIntake(b *testing.B) {
	msg := message("bench", 100<<10)
	e := startBenchStore(b)
	servers := []struct {
		name string
		addr string
		c    *smtp.Client
		took time.Duration
	}{{name: "floor", addr: serveFloor(b, false)}, {name: "floor-fsync", addr: serveFloor(b, true)}, {name: "intake", addr: e.addr}}
	for i := range servers {
		c, err := smtp.Dial(servers[i].addr)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		if err := c.Hello("bench.test"); err != nil {
			b.Fatal(err)
		}
		servers[i].c = c
	}
	b.SetBytes(int64(len(msg)))
	u := &uniqueMessages{msg: msg}
	b.ResetTimer()
	for range b.N {
		m := u.next()
		for i := range servers {
			start := time.Now()
			if err := servers[i].c.SendMail("billing@supplier.test", []string{"invoices@in.kobana.test"}, strings.NewReader(m)); err != nil {
				b.Fatalf("%s: %v", servers[i].name, err)
			}
			servers[i].took += time.Since(start)
		}
	}
	b.StopTimer()
	rate := map[string]float64{}
	for _, s := range servers {
		rate[s.name] = float64(b.N) / s.took.Seconds()
		b.ReportMetric(rate[s.name], s.name+"-msgs/s")
	}
	b.ReportMetric(rate["intake"]/rate["floor"], "intake/floor")
	b.ReportMetric(rate["intake"]/rate["floor-fsync"], "intake/floor-fsync")
	if n := len(e.jobs()); n < b.N {
		b.Fatalf("%d jobs for %d messages", n, b.N)
	}
}

// BenchmarkIntakeConcurrent: the same with 8 connections sending at once, as
// a busy server sees (each server measured in its own sub-benchmark).
func BenchmarkIntakeConcurrent(b *testing.B) {
	msg := message("bench", 100<<10)
	b.Run("floor", func(b *testing.B) { sendParallel(b, serveFloor(b, false), "invoices@in.kobana.test", msg, 8) })
	b.Run("floor-fsync", func(b *testing.B) { sendParallel(b, serveFloor(b, true), "invoices@in.kobana.test", msg, 8) })
	b.Run("intake", func(b *testing.B) {
		e := startBenchStore(b)
		sendParallel(b, e.addr, "invoices@in.kobana.test", msg, 8)
		if n := len(e.jobs()); n < b.N {
			b.Fatalf("%d jobs for %d messages", n, b.N)
		}
	})
}
