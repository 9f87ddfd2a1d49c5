package inboxmcp_test

import (
	"encoding/base64"
	"strconv"
	"testing"
	"time"
)

func mustB64(t *testing.T, s string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func unix(t *testing.T, s string) time.Time {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.Unix(n, 0)
}
