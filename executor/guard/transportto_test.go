package guard

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
)

// TransportTo plays any host on one address, but the guard still decides
// whether that address may be reached.
func TestTransportTo(t *testing.T) {
	var hosts atomic.Value
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		hosts.Store(r.Host)
	}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()

	denied := &http.Client{Transport: (&Guard{}).TransportTo(addr)}
	_, err := denied.Get("http://erp.example.com/payables")
	var de *DeniedError
	if !errors.As(err, &de) || de.Class != "loopback" || hits.Load() != 0 {
		t.Fatalf("deny-list only: err %v, server hits %d", err, hits.Load())
	}

	g := &Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	allowed := &http.Client{Transport: g.TransportTo(addr)}
	resp, err := allowed.Get("http://erp.example.com/payables")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if hits.Load() != 1 || hosts.Load() != "erp.example.com" {
		t.Fatalf("hits %d, Host %v", hits.Load(), hosts.Load())
	}
}
