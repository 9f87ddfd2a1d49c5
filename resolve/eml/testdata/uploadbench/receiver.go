//go:build ignore

// Command receiver is the loopback HTTP server both uploads are measured
// against: it reads each request body to the end, discards it, and answers
// 200 with the number of bytes received.
//
//	go run receiver.go -addr 127.0.0.1:18080
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18080", "listen address")
	flag.Parse()
	log.Fatal(http.ListenAndServe(*addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"received\":%d}", n)
	})))
}
