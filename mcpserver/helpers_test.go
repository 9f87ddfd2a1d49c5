package mcpserver_test

import "net/http"

type tokenTransport struct {
	token string
	base  http.RoundTripper
}

func (t tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.base.RoundTrip(r)
}

func httpClient(token string) *http.Client {
	return &http.Client{Transport: tokenTransport{token: token, base: http.DefaultTransport}}
}
