package sidecar

import (
	"slices"
	"strings"
	"testing"
)

func TestParseResponses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		indices []int
		err     string
	}{
		{`[{"status": 200}, null, {"status": 201}]`, []int{0, 2}, ""},
		{`{"1": {"status": 200, "body": {"id": 1}}}`, []int{1}, ""},
		{`{"steps": [{"index": 3, "response": {"status": 204}}, {"index": 4}]}`, []int{3}, ""},
		{`{"steps": [{"response": {"status": 201}}, {"response": {"status": 202}}]}`, []int{0, 1}, ""},
		{`{"01": {}}`, nil, `key "01" is not a step index`},
		{`{"-1": {}}`, nil, `key "-1" is not a step index`},
		{`{"x": {}}`, nil, `key "x" is not a step index`},
		{`"text"`, nil, "expected a JSON object or array"},
		{` `, nil, "the file is empty"},
		{``, nil, "the file is empty"},
		{`[{"status": "ok"}]`, nil, "cannot unmarshal"},
	} {
		got, err := ParseResponses([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		var indices []int
		for i := range got {
			indices = append(indices, i)
		}
		slices.Sort(indices)
		if err != nil || !slices.Equal(indices, tc.indices) {
			t.Errorf("%s: %v %v, want steps %v", tc.in, indices, err, tc.indices)
		}
	}
}
