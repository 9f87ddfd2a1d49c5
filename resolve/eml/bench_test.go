package eml

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"
)

var benchSizes = []int64{1 << 20, 64 << 20}

func sizeName(n int64) string { return fmt.Sprintf("%dMiB", n>>20) }

// encodedPart returns the raw (base64, line-wrapped) body of the large
// attachment in an .eml written by writeLarge.
func encodedPart(tb testing.TB, eml []byte) []byte {
	tb.Helper()
	start := bytes.Index(eml, []byte("base64\r\n\r\n"))
	end := bytes.Index(eml, []byte("\r\n--big\r\nContent-Type: text/plain; name="))
	if start < 0 || end < 0 {
		tb.Fatal("large attachment not found")
	}
	return eml[start+len("base64\r\n\r\n") : end]
}

// BenchmarkFloor is the floor Message.Open is measured against: decoding the
// same base64 part from memory with encoding/base64 and nothing else.
func BenchmarkFloor(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(sizeName(size), func(b *testing.B) {
			var buf bytes.Buffer
			if _, err := writeLarge(&buf, size, 1); err != nil {
				b.Fatal(err)
			}
			part := encodedPart(b, buf.Bytes())
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				n, err := io.Copy(io.Discard, base64.NewDecoder(base64.StdEncoding, bytes.NewReader(part)))
				if err != nil || n != size {
					b.Fatal(n, err)
				}
			}
		})
	}
}

// BenchmarkOpen streams one attachment with Message.Open, from memory (the
// floor's conditions) and from a file.
func BenchmarkOpen(b *testing.B) {
	for _, size := range benchSizes {
		var buf bytes.Buffer
		if _, err := writeLarge(&buf, size, 1); err != nil {
			b.Fatal(err)
		}
		eml := buf.Bytes()
		b.Run("memory/"+sizeName(size), func(b *testing.B) {
			m, err := newBytes(eml)
			if err != nil {
				b.Fatal(err)
			}
			benchmarkOpen(b, m, size)
		})
		b.Run("file/"+sizeName(size), func(b *testing.B) {
			path := b.TempDir() + "/large.eml"
			if err := os.WriteFile(path, eml, 0o600); err != nil {
				b.Fatal(err)
			}
			m, err := Open(path)
			if err != nil {
				b.Fatal(err)
			}
			benchmarkOpen(b, m, size)
		})
	}
}

func benchmarkOpen(b *testing.B, m *Message, size int64) {
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := m.Open(0)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, r)
		r.Close()
		if err != nil || n != size {
			b.Fatal(n, err)
		}
	}
}

// BenchmarkNew is the first pass: listing the attachments and counting their
// decoded sizes.
func BenchmarkNew(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(sizeName(size), func(b *testing.B) {
			path, _ := writeLargeFile(b, size)
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := Open(path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// heapSampler is a writer that discards what it is given and records the
// largest heap in use, sampled every MiB.
type heapSampler struct {
	since int64
	peak  uint64
}

func (h *heapSampler) Write(p []byte) (int, error) {
	h.since += int64(len(p))
	if h.since >= 1<<20 {
		h.since = 0
		h.sample()
	}
	return len(p), nil
}

func (h *heapSampler) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.peak = max(h.peak, ms.HeapInuse)
}

// BenchmarkMemory reports the heap in use above the baseline while a whole
// run reads an .eml file (first pass, then streaming the attachment), for a
// 1 MiB and a 64 MiB attachment: it must not grow with the attachment.
func BenchmarkMemory(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(sizeName(size), func(b *testing.B) {
			path, _ := writeLargeFile(b, size)
			var peak uint64
			for b.Loop() {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				base := ms.HeapInuse
				s := &heapSampler{peak: base}
				m, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				s.sample()
				r, err := m.Open(0)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(s, r); err != nil {
					b.Fatal(err)
				}
				r.Close()
				peak = max(peak, s.peak-base)
			}
			b.ReportMetric(float64(peak), "peak-heap-B")
		})
	}
}
