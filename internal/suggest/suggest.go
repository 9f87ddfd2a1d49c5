// Package suggest offers "did you mean" candidates for misspelt names.
//
// Closest returns the allowed name nearest to what was written, so that a
// diagnostic can say `unknown field "expected-status"; did you mean "expected_status"?`.
package suggest

import "strings"

// Closest returns the candidate nearest to word by edit distance, compared
// case-insensitively and treating '-' and '_' as the same character, or ""
// when no candidate is close enough to be a plausible misspelling.
func Closest(word string, candidates []string) string {
	w := fold(word)
	best, bestDist := "", -1
	for _, c := range candidates {
		d := distance(w, fold(c))
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 || bestDist > threshold(len(w)) {
		return ""
	}
	return best
}

// threshold is the largest edit distance still taken for a typo: short words
// tolerate one edit, longer ones two, long ones three.
func threshold(n int) int {
	switch {
	case n <= 3:
		return 1
	case n <= 8:
		return 2
	default:
		return 3
	}
}

func fold(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), "-", "_")
}

// distance is the optimal-string-alignment edit distance (Levenshtein plus
// transpositions of adjacent characters) between a and b, over bytes.
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		// Names this long are not typos of short keywords; avoid quadratic work.
		if a == b {
			return 0
		}
		return len(a) + len(b)
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
