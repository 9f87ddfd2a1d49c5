package eml

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInferType(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"nota.pdf":               "application/pdf",
		"NOTA.PDF":               "application/pdf",
		"NFe3526.xml":            "application/xml",
		"dados.json":             "application/json",
		"boletos.csv":            "text/csv",
		"leia.txt":               "text/plain",
		"pagina.html":            "text/html",
		"logo.png":               "image/png",
		"foto.JPG":               "image/jpeg",
		"foto.jpeg":              "image/jpeg",
		"anim.gif":               "image/gif",
		"img.webp":               "image/webp",
		"icone.svg":              "image/svg+xml",
		"scan.tif":               "image/tiff",
		"scan.tiff":              "image/tiff",
		"img.bmp":                "image/bmp",
		"IMG_0001.HEIC":          "image/heic",
		"pacote.zip":             "application/zip",
		"backup.tar.gz":          "application/gzip",
		"arquivos.7z":            "application/x-7z-compressed",
		"arquivos.rar":           "application/vnd.rar",
		"contrato.doc":           "application/msword",
		"contrato.docx":          "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
		"planilha.xls":           "application/vnd.ms-excel",
		"planilha.xlsx":          xlsx,
		"slides.ppt":             "application/vnd.ms-powerpoint",
		"slides.pptx":            "application/vnd.openxmlformats-officedocument.presentationml.presentation",
		"texto.odt":              "application/vnd.oasis.opendocument.text",
		"planilha.ods":           "application/vnd.oasis.opendocument.spreadsheet",
		"carta.rtf":              "application/rtf",
		"mensagem.eml":           "message/rfc822",
		"mensagem.msg":           "application/vnd.ms-outlook",
		"convite.ics":            "text/calendar",
		"contato.vcf":            "text/vcard",
		"audio.mp3":              "audio/mpeg",
		"video.mp4":              "video/mp4",
		"audio.wav":              "audio/wav",
		"extrato.ofx":            "application/x-ofx",
		"CB0101.RET":             "text/plain",
		"CB0101.rem":             "text/plain",
		"programa.exe":           octetStream,
		"sem-extensao":           octetStream,
		"":                       octetStream,
		"ponto.":                 octetStream,
		".pdf":                   "application/pdf",
		`C:\Users\joao\nota.pdf`: "application/pdf",
	} {
		if got := InferType(name); got != want {
			t.Errorf("InferType(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestParseHeaderValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in     string
		value  string
		params map[string]string
	}{
		{`application/PDF; Name="a.pdf"`, "application/pdf", map[string]string{"name": "a.pdf"}},
		{`attachment; filename*=UTF-8''nota%20fiscal%C3%A7.pdf`, "attachment", map[string]string{"filename": "nota fiscalç.pdf"}},
		{`attachment; filename*=iso-8859-1'pt'nota%E7%E3o.pdf`, "attachment", map[string]string{"filename": "notação.pdf"}},
		{`attachment; filename*=windows-1252''%93aspas%94.txt`, "attachment", map[string]string{"filename": "“aspas”.txt"}},
		{`attachment; filename*0*=UTF-8''a%C3%A7; filename*1="b c"; filename*2*=%C3%A3.pdf`, "attachment", map[string]string{"filename": "açb cã.pdf"}},
		{`attachment; filename*1=b.pdf; filename*0=a`, "attachment", map[string]string{"filename": "ab.pdf"}},
		{`attachment; filename*0=a; filename*2=c`, "attachment", map[string]string{"filename": "a"}},
		{`attachment; filename="nota_.pdf"; filename*=iso-8859-1''nota%E7.pdf`, "attachment", map[string]string{"filename": "notaç.pdf"}},
		{`attachment; filename*=utf-8''a%C3%A7.pdf; filename="a_.pdf"`, "attachment", map[string]string{"filename": "aç.pdf"}},
		{`attachment; filename*=nocharset.pdf; filename="plain.pdf"`, "attachment", map[string]string{"filename": "plain.pdf"}},
		{`attachment; filename=nota fiscal.pdf`, "attachment", map[string]string{"filename": "nota fiscal.pdf"}},
		{`attachment; filename="a.pdf"; filename="b.pdf"`, "attachment", map[string]string{"filename": "a.pdf"}},
		{`attachment; filename="C:\\dir\\a.pdf"`, "attachment", map[string]string{"filename": `C:\dir\a.pdf`}},
		{`attachment; filename="unterminated.pdf`, "attachment", map[string]string{"filename": "unterminated.pdf"}},
		{`attachment; filename==?UTF-8?B?bm90YS5wZGY=?=`, "attachment", map[string]string{"filename": "=?UTF-8?B?bm90YS5wZGY=?="}},
		{`attachment; filename="semi;colon.pdf"; size=10`, "attachment", map[string]string{"filename": "semi;colon.pdf", "size": "10"}},
		{`attachment;;; novalue; =x; filename=a.pdf`, "attachment", map[string]string{"filename": "a.pdf"}},
		{`inline`, "inline", map[string]string{}},
		{``, "", nil},
	} {
		value, params := parseHeaderValue(tc.in)
		if value != tc.value {
			t.Errorf("parseHeaderValue(%q) value = %q, want %q", tc.in, value, tc.value)
		}
		if diff := cmp.Diff(tc.params, params); diff != "" {
			t.Errorf("parseHeaderValue(%q) params (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestDecodeWords(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"=?UTF-8?B?Ym9sZXRvIG7CuiA0Mi5wZGY=?=":                        "boleto nº 42.pdf",
		"=?ISO-8859-1?Q?cota=E7=E3o_mar=E7o.xlsx?=":                   "cotação março.xlsx",
		"=?iso-8859-15?Q?pre=E7o_=A4.pdf?=":                           "preço €.pdf",
		"=?windows-1252?Q?=93x=94?= =?windows-1252?Q?.pdf?=":          "“x”.pdf",
		"=?Shift_JIS?B?k/qWe4zqLnBkZg==?=":                            "日本語.pdf",
		"=?unknown-charset?Q?abc?=":                                   "=?unknown-charset?Q?abc?=",
		"plain.pdf":                                                   "plain.pdf",
		"raw latin-1 \xe7\xe3o.pdf":                                   "raw latin-1 ção.pdf",
		"=?UTF-8?Q?relat=C3=B3rio?= de =?UTF-8?Q?cobran=C3=A7a?=.pdf": "relatório de cobrança.pdf",
	} {
		if got := decodeWords(in); got != want {
			t.Errorf("decodeWords(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSanitizeFilename(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"nota.pdf":                        "nota.pdf",
		"../../etc/passwd":                "passwd",
		`C:\Users\joao\nota.pdf`:          "nota.pdf",
		"dir/":                            "",
		"..":                              "",
		"  espaços.pdf  ":                 "espaços.pdf",
		"a\x00b\r\nc.pdf":                 "abc.pdf",
		"fatura\u202efdp.exe":             "faturafdp.exe",
		"nota fiscalc\u0327.pdf":          "nota fiscalç.pdf",
		"x\u2066y\u2069.pdf":              "xy.pdf",
		strings.Repeat("á", 200) + ".pdf": strings.Repeat("á", 125) + ".pdf",
	} {
		got := sanitizeFilename(in)
		if got != want {
			t.Errorf("sanitizeFilename(%q) = %q, want %q", in, got, want)
		}
		if len(got) > maxFilenameBytes {
			t.Errorf("sanitizeFilename(%q) is %d bytes long", in, len(got))
		}
	}
	if got := subjectFilename("Fwd: NF 123/2026"); got != "Fwd_ NF 123_2026.eml" {
		t.Errorf("subjectFilename = %q", got)
	}
	if got := subjectFilename("  "); got != "" {
		t.Errorf("subjectFilename of a blank subject = %q", got)
	}
}

// TestClassify covers which parts count as attachments, message by message.
func TestClassify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		eml  string
		want []string // "filename content/type" of each attachment
	}{
		{"text body with a name is still the body", "Content-Type: text/plain; name=corpo.txt\r\n\r\nhi", nil},
		{"html body with a filename in an alternative",
			mp("alternative", "Content-Type: text/plain\r\n\r\nhi", "Content-Type: text/html; name=corpo.html\r\nContent-Disposition: inline; filename=corpo.html\r\n\r\n<p>hi</p>"), nil},
		{"text part with a filename after the body",
			mp("mixed", "Content-Type: text/plain\r\n\r\nhi", "Content-Type: text/plain; name=notas.txt\r\nContent-Disposition: inline; filename=notas.txt\r\n\r\nnotes"),
			[]string{"notas.txt text/plain"}},
		{"body text marked as attachment",
			mp("mixed", "Content-Type: text/plain\r\nContent-Disposition: attachment\r\n\r\nhi"), []string{"attachment.txt text/plain"}},
		{"non-text first part with a filename",
			mp("mixed", "Content-Type: image/jpeg; name=foto.jpg\r\n\r\nJPEG"), []string{"foto.jpg image/jpeg"}},
		{"inline image with a filename",
			mp("related", "Content-Type: text/html\r\n\r\n<img>", "Content-Type: image/png; name=logo.png\r\nContent-ID: <x>\r\nContent-Disposition: inline; filename=logo.png\r\n\r\nPNG"),
			[]string{"logo.png image/png"}},
		{"inline image without a filename",
			mp("related", "Content-Type: text/html\r\n\r\n<img>", "Content-Type: image/png\r\nContent-ID: <x>\r\n\r\nPNG"), nil},
		{"attachment with an unparseable type",
			mp("mixed", "Content-Type: text/plain\r\n\r\nhi", "Content-Type: pdf\r\nContent-Disposition: attachment; filename=a.pdf\r\n\r\n%PDF"),
			[]string{"a.pdf application/pdf"}},
		{"generic declared type",
			mp("mixed", "Content-Type: text/plain\r\n\r\nhi", "Content-Type: application/x-download; name=a.docx\r\n\r\nPK"),
			[]string{"a.docx application/vnd.openxmlformats-officedocument.wordprocessingml.document"}},
		{"specific declared type is kept",
			mp("mixed", "Content-Type: text/plain\r\n\r\nhi", "Content-Type: application/zip; name=a.pdf\r\n\r\nPK"),
			[]string{"a.pdf application/zip"}},
		{"no filename and no type",
			mp("mixed", "Content-Type: text/plain\r\n\r\nhi", "Content-Disposition: attachment\r\n\r\n?"),
			[]string{"attachment application/octet-stream"}},
		{"unnamed octet-stream",
			mp("mixed", "Content-Type: text/plain\r\n\r\nhi", "Content-Type: application/octet-stream\r\nContent-Disposition: attachment\r\n\r\n?"),
			[]string{"attachment application/octet-stream"}},
		{"delivery status without a filename is not an attachment",
			mp("report", "Content-Type: text/plain\r\n\r\nbounce", "Content-Type: message/delivery-status\r\n\r\nStatus: 5.0.0", "Content-Type: message/rfc822\r\n\r\nSubject: original\r\n\r\nbody"),
			[]string{"original.eml message/rfc822"}},
		{"signed message",
			mp("signed", "Content-Type: text/plain\r\n\r\nhi", "Content-Type: application/pkcs7-signature; name=smime.p7s\r\nContent-Disposition: attachment; filename=smime.p7s\r\n\r\nSIG"),
			[]string{"smime.p7s application/pkcs7-signature"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := newBytes([]byte(tc.eml))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range m.Attachments() {
				got = append(got, a.Filename+" "+a.ContentType)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("attachments (-want +got):\n%s", diff)
			}
		})
	}
}

// mp builds a multipart message of the given subtype from part texts.
func mp(sub string, parts ...string) string {
	var b strings.Builder
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: multipart/" + sub + "; boundary=\"=b\"\r\n\r\n")
	for _, p := range parts {
		b.WriteString("--=b\r\n" + p + "\r\n")
	}
	b.WriteString("--=b--\r\n")
	return b.String()
}
