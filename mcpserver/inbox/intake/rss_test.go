package intake_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-smtp"
)

// The peak-memory benchmark runs the server in a process of its own (this
// test binary, started again with KOBANA_INTAKE_SERVE set), so what it
// measures is the server's resident memory (VmHWM) and nothing of the
// client's.
const serveEnv = "KOBANA_INTAKE_SERVE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(serveEnv); mode != "" {
		os.Exit(serveForMeasurement(mode))
	}
	os.Exit(m.Run())
}

// serveForMeasurement runs a server ("intake" or "floor"), prints its
// address, serves until stdin closes, then prints its peak RSS in KiB.
func serveForMeasurement(mode string) int {
	t := &fakeTB{dir: os.Getenv("KOBANA_INTAKE_DIR")}
	var addr string
	switch mode {
	case "floor":
		addr = serveFloor(t, true)
	default:
		addr = startStore(t).addr
	}
	fmt.Printf("ADDR %s\n", addr)
	io.Copy(io.Discard, os.Stdin)
	fmt.Printf("VMHWM %d\n", vmHWM())
	t.cleanup()
	return 0
}

// vmHWM is this process's peak resident set size in KiB.
func vmHWM() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return -1
}

// fakeTB lets the test helpers build a server outside a test.
type fakeTB struct {
	testing.TB
	dir      string
	n        int
	cleanups []func()
}

func (f *fakeTB) Helper()                   {}
func (f *fakeTB) Cleanup(fn func())         { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Fatal(args ...any)         { fmt.Fprintln(os.Stderr, args...); os.Exit(2) }
func (f *fakeTB) Fatalf(s string, a ...any) { fmt.Fprintf(os.Stderr, s+"\n", a...); os.Exit(2) }
func (f *fakeTB) TempDir() string {
	f.n++
	d := fmt.Sprintf("%s/%d", f.dir, f.n)
	os.MkdirAll(d, 0o700)
	return d
}
func (f *fakeTB) cleanup() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// peakRSS starts a server process, sends it ten messages of size bytes at
// once, and returns its peak RSS in MiB.
func peakRSS(b *testing.B, mode string, msg string) float64 {
	// Each burst stores 250 MB: its directory goes when the burst is over,
	// however many bursts the benchmark runs.
	dir, err := os.MkdirTemp("", "kobana-peak-rss-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serveEnv+"="+mode, "KOBANA_INTAKE_DIR="+dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Wait()
	out := bufio.NewScanner(stdout)
	if !out.Scan() {
		b.Fatal("the server process printed no address")
	}
	addr, ok := strings.CutPrefix(out.Text(), "ADDR ")
	if !ok {
		b.Fatalf("server process: %q", out.Text())
	}
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := net.Dialer{}
			conn, err := d.DialContext(context.Background(), "tcp", addr)
			if err != nil {
				errs <- err
				return
			}
			c := smtp.NewClient(conn)
			defer c.Close()
			errs <- c.SendMail("billing@supplier.test", []string{"invoices@in.kobana.test"}, strings.NewReader(msg))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatalf("sending to the %s server: %v", mode, err)
		}
	}
	stdin.Close()
	for out.Scan() {
		if v, ok := strings.CutPrefix(out.Text(), "VMHWM "); ok {
			kb, _ := strconv.ParseFloat(v, 64)
			return kb / 1024
		}
	}
	b.Fatal("the server process printed no peak RSS")
	return 0
}

// BenchmarkPeakRSS: ten messages of almost 25 MiB (an 18 MiB attachment)
// arriving at once; the server's peak RSS, next to the floor server's
// (bare go-smtp writing each message to a file). Goal: intake under
// 150 MiB.
func BenchmarkPeakRSS(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc/self/status (Linux) to read the peak RSS")
	}
	msg := message("big", 18<<20)
	if len(msg) >= 25<<20 {
		b.Fatalf("message of %d bytes is over the limit", len(msg))
	}
	for _, mode := range []string{"floor", "intake"} {
		b.Run(mode, func(b *testing.B) {
			var peak float64
			for range b.N {
				peak = max(peak, peakRSS(b, mode, msg))
			}
			b.ReportMetric(peak, "peak-RSS-MiB")
			if mode == "intake" && peak >= 150 {
				b.Errorf("peak RSS %.1f MiB, goal under 150 MiB", peak)
			}
		})
	}
}
