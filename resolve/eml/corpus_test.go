package eml

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The corpus is real-world and deliberately broken mail from public test
// suites, redistributed under their licences (each folder holds its LICENSE):
//
//   - cpython/: CPython's Lib/test/test_email/data/msg_*.txt, Python 3.11.2
//     (Debian package libpython3.11-testsuite), https://github.com/python/cpython,
//     Python Software Foundation License.
//   - enmime/: testdata/{mail,low-quality,parts}/*.raw of
//     https://github.com/jhillyerd/enmime at 0d919cc223e9cb6c2d45d6c653e7a64156006351,
//     MIT License; a file named "mail-x.raw" here is testdata/mail/x.raw there.
//   - flanker/: tests/fixtures/messages/**/*.eml of
//     https://github.com/mailgun/flanker at c7f70738dbb39eda2861b03917b63ec9fa828f5d,
//     Apache License 2.0 (big.eml, torture.eml and enclosed-endless.eml left out
//     for size); a file named "spam-x.eml" here is messages/spam/x.eml there.
//
// golden.json is what Python's email package (3.11, policy default) extracts
// from each message, and from each cut short at a third and at two thirds
// of its length (keys "name@length"), under this project's definition of an
// attachment; golden.py, run by hand, writes it.

// goldenAttachment is one attachment as Python extracted it.
type goldenAttachment struct {
	Index       int     `json:"index"`
	Filename    *string `json:"filename"`
	ContentType string  `json:"content_type"`
	Size        *int64  `json:"size"`
	SHA256      *string `json:"sha256"`
	// PythonDefects are the class names of the defects Python recorded.
	PythonDefects []string `json:"python_defects"`
}

// corpusDifferences are the attachments ("name#index") where this reader
// deliberately differs from Python, with the reason. Besides these, base64
// that ends with a single dangling character is decoded here (the character
// dropped) where Python returns the part undecoded (its
// InvalidBase64LengthDefect): such attachments are counted, not compared.
var corpusDifferences = map[string]string{
	"enmime/mail-mime-unquoted-tspecials-param.raw@1726#0": "name=Invoice_(302232133150612).pdf unquoted: the value is kept whole, as mail clients show it; " +
		"Python reads the parentheses as a comment and names the file \"Invoice_\"",
}

// TestCorpus reads every message of the corpus and compares each
// attachment with what Python's email package extracts: the same number of
// attachments in the same order, the same declared type and filename, and
// the same bytes (size and SHA-256, streamed and as ReadIndex's digest).
func TestCorpus(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/corpus/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden map[string][]goldenAttachment
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	seen, compared, dangling := 0, 0, 0
	for name, want := range golden {
		file, cutAt, cut := strings.Cut(name, "@")
		raw, err := os.ReadFile(filepath.Join("testdata/corpus", file))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if cut {
			n, err := strconv.Atoi(cutAt)
			if err != nil || n > len(raw) {
				t.Fatalf("%s: bad cut", name)
			}
			raw = raw[:n]
		}
		seen++
		t.Run(name, func(t *testing.T) {
			m, err := newBytes(raw)
			if err != nil {
				t.Fatal(err)
			}
			got := m.Attachments()
			ix := m.Index()
			full, err := ReadIndex(bytes.NewReader(raw), int64(len(raw)))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				for _, a := range got {
					t.Logf("go: %d %q %s %d %v", a.Index, a.Filename, a.ContentType, a.Size, a.Defects)
				}
				for _, a := range want {
					t.Logf("python: %d %v %s", a.Index, a.Filename, a.ContentType)
				}
				t.Fatalf("%d attachments, Python finds %d", len(got), len(want))
			}
			for i, w := range want {
				a := got[i]
				if _, ok := corpusDifferences[name+"#"+strconv.Itoa(i)]; ok {
					continue
				}
				declared := ix.Parts[m.parts[i]].ContentType
				if declared != w.ContentType {
					t.Errorf("attachment %d: declared type %q, Python %q", i, declared, w.ContentType)
				}
				if w.Filename != nil {
					if pyName := sanitizeFilename(decodeWords(*w.Filename)); pyName != "" && pyName != a.Filename {
						t.Errorf("attachment %d: filename %q, Python %q", i, a.Filename, pyName)
					}
				}
				if w.SHA256 == nil {
					continue
				}
				if slices.Contains(w.PythonDefects, "InvalidBase64LengthDefect") && slices.ContainsFunc(a.Defects, func(d Defect) bool { return d.Code == DefectBase64DanglingCharacter }) {
					dangling++
					continue
				}
				r, err := m.Open(i)
				if err != nil {
					t.Fatal(err)
				}
				h := sha256.New()
				n, err := io.Copy(h, r)
				r.Close()
				if err != nil {
					t.Fatalf("attachment %d: %v", i, err)
				}
				if n != *w.Size || hex.EncodeToString(h.Sum(nil)) != *w.SHA256 {
					t.Errorf("attachment %d (%s): %d bytes (defects %v), Python %d bytes; same bytes: %v",
						i, a.Filename, n, a.Defects, *w.Size, hex.EncodeToString(h.Sum(nil)) == *w.SHA256)
				}
				if n != a.Size {
					t.Errorf("attachment %d: streamed %d bytes, Size %d", i, n, a.Size)
				}
				if d := full.Parts[m.parts[i]].SHA256; d != *w.SHA256 {
					t.Errorf("attachment %d: ReadIndex's digest %s, Python's %s", i, d, *w.SHA256)
				}
				compared++
			}
		})
	}
	files, _ := filepath.Glob("testdata/corpus/*/*")
	for _, path := range files {
		name, _ := filepath.Rel("testdata/corpus", path)
		if _, ok := golden[filepath.ToSlash(name)]; !ok && filepath.Base(name) != "LICENSE" && filepath.Dir(path) != "testdata/corpus" {
			t.Errorf("%s: not in golden.json (run golden.py)", name)
		}
	}
	if seen < 500 {
		t.Errorf("only %d corpus messages read", seen)
	}
	t.Logf("%d messages, %d attachments compared byte for byte, %d with a dangling base64 character (Python leaves them undecoded)", seen, compared, dangling)
}
