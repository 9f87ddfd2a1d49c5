package mcptest

import (
	"reflect"
	"regexp"
	"testing"
)

// Tag returns the value of the struct tag key on field of T (a tool's
// argument type: its enum, pattern, minimum…), failing t when T has no such
// field or the field no such tag.
func Tag[T any](t testing.TB, field, key string) string {
	t.Helper()
	f, ok := reflect.TypeFor[T]().FieldByName(field)
	if !ok {
		t.Fatalf("%v has no field %s", reflect.TypeFor[T](), field)
	}
	v, ok := f.Tag.Lookup(key)
	if !ok {
		t.Fatalf("%v.%s has no %s tag", reflect.TypeFor[T](), field, key)
	}
	return v
}

// WantAnchored checks that the regular expression pattern (an argument's
// pattern tag) accepts each of ids and refuses each id with anything around
// it: a space before or after, a line break after, a path after.
func WantAnchored(t testing.TB, pattern string, ids ...string) {
	t.Helper()
	re, err := regexp.Compile(pattern)
	if err != nil {
		t.Fatalf("pattern %s: %v", pattern, err)
	}
	for _, id := range ids {
		if !re.MatchString(id) {
			t.Errorf("%s refuses %q", pattern, id)
		}
		for _, bad := range []string{" " + id, id + " ", id + "\n", id + "/x"} {
			if re.MatchString(bad) {
				t.Errorf("%s accepts %q", pattern, bad)
			}
		}
	}
}
