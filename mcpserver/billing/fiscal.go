package billing

import (
	"fmt"
	"strings"
	"time"
)

// digitsOnly strips punctuation from a CPF, CNPJ, CEP or phone number.
func digitsOnly(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// weightedSum multiplies digits by weights, position by position.
func weightedSum(digits string, weights []int) int {
	sum := 0
	for i, w := range weights {
		sum += int(digits[i]-'0') * w
	}
	return sum
}

func repeated(s string) bool { return strings.Count(s, s[:1]) == len(s) }

// cpfDigits returns the two check digits of the first nine digits of a CPF.
func cpfDigits(nine string) string {
	d1 := weightedSum(nine, []int{10, 9, 8, 7, 6, 5, 4, 3, 2}) * 10 % 11 % 10
	ten := nine + string(rune('0'+d1))
	d2 := weightedSum(ten, []int{11, 10, 9, 8, 7, 6, 5, 4, 3, 2}) * 10 % 11 % 10
	return fmt.Sprintf("%d%d", d1, d2)
}

// ValidCPF reports whether s (digits only) is a CPF with valid check digits.
func ValidCPF(s string) bool {
	return len(s) == 11 && allDigits(s) && !repeated(s) && cpfDigits(s[:9]) == s[9:]
}

func mod11(sum int) int {
	if r := sum % 11; r >= 2 {
		return 11 - r
	}
	return 0
}

// cnpjDigits returns the two check digits of the first twelve digits of a CNPJ.
func cnpjDigits(twelve string) string {
	d1 := mod11(weightedSum(twelve, []int{5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}))
	thirteen := twelve + string(rune('0'+d1))
	d2 := mod11(weightedSum(thirteen, []int{6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}))
	return fmt.Sprintf("%d%d", d1, d2)
}

// ValidCNPJ reports whether s (digits only) is a CNPJ with valid check digits.
func ValidCNPJ(s string) bool {
	return len(s) == 14 && allDigits(s) && !repeated(s) && cnpjDigits(s[:12]) == s[12:]
}

// accessKeyDigit is the modulo-11 check digit of the first 43 digits of an
// NF-e access key: weights 2 to 9 from the right, repeating.
func accessKeyDigit(key43 string) int {
	sum, w := 0, 2
	for i := len(key43) - 1; i >= 0; i-- {
		sum += int(key43[i]-'0') * w
		if w++; w > 9 {
			w = 2
		}
	}
	return mod11(sum)
}

// ValidAccessKey reports whether key is a 44-digit NF-e access key whose
// last digit is its check digit.
func ValidAccessKey(key string) bool {
	return len(key) == 44 && allDigits(key) && accessKeyDigit(key[:43]) == int(key[43]-'0')
}

// ufCodes are the IBGE codes of the states, the first two digits of an
// access key.
var ufCodes = map[string]int{
	"RO": 11, "AC": 12, "AM": 13, "RR": 14, "PA": 15, "AP": 16, "TO": 17,
	"MA": 21, "PI": 22, "CE": 23, "RN": 24, "PB": 25, "PE": 26, "AL": 27, "SE": 28, "BA": 29,
	"MG": 31, "ES": 32, "RJ": 33, "SP": 35,
	"PR": 41, "SC": 42, "RS": 43,
	"MS": 50, "MT": 51, "GO": 52, "DF": 53,
}

// AccessKey builds the 44-digit access key (chave de acesso) of an NF-e
// modelo 55: state code, year and month of issue, issuer CNPJ, model,
// series, number, emission type 1 (normal), the numeric code and the check
// digit.
func AccessKey(state string, issued time.Time, cnpj string, series, number, code int) (string, error) {
	uf, ok := ufCodes[state]
	if !ok {
		return "", fmt.Errorf("access key: unknown state %q", state)
	}
	if len(cnpj) != 14 || !allDigits(cnpj) {
		return "", fmt.Errorf("access key: CNPJ must have 14 digits, got %q", cnpj)
	}
	if series < 0 || series > 999 || number < 1 || number > 999999999 || code < 0 || code > 99999999 {
		return "", fmt.Errorf("access key: series %d, number %d or code %d out of range", series, number, code)
	}
	k := fmt.Sprintf("%02d%s%s55%03d%09d1%08d", uf, issued.Format("0601"), cnpj, series, number, code)
	return fmt.Sprintf("%s%d", k, accessKeyDigit(k)), nil
}

// checkDocument normalizes a CPF or CNPJ and names its type.
func checkDocument(raw string) (doc, typ string, err error) {
	doc = digitsOnly(raw)
	switch {
	case len(doc) == 11 && ValidCPF(doc):
		return doc, "cpf", nil
	case len(doc) == 14 && ValidCNPJ(doc):
		return doc, "cnpj", nil
	case len(doc) == 11:
		return "", "", fmt.Errorf("document %q is not a valid CPF: its check digits do not match", raw)
	case len(doc) == 14:
		return "", "", fmt.Errorf("document %q is not a valid CNPJ: its check digits do not match", raw)
	}
	return "", "", fmt.Errorf("document %q must be a CPF (11 digits) or a CNPJ (14 digits)", raw)
}

// formatDocument punctuates a CPF or CNPJ for documents.
func formatDocument(d string) string {
	switch len(d) {
	case 11:
		return d[:3] + "." + d[3:6] + "." + d[6:9] + "-" + d[9:]
	case 14:
		return d[:2] + "." + d[2:5] + "." + d[5:8] + "/" + d[8:12] + "-" + d[12:]
	}
	return d
}

// formatBRL writes cents as Brazilian reais: R$ 1.234,56.
func formatBRL(cents int64) string {
	neg := cents < 0
	if neg {
		cents = -cents
	}
	whole := fmt.Sprint(cents / 100)
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(r)
	}
	s := fmt.Sprintf("R$ %s,%02d", b.String(), cents%100)
	if neg {
		s = "-" + s
	}
	return s
}

// decimal writes cents as a dot-separated decimal with two places (NF-e XML).
func decimal(cents int64) string {
	return fmt.Sprintf("%d.%02d", cents/100, cents%100)
}
