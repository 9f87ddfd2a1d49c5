// Package sidecar reads the example responses kept beside a workflow
// document — W.responses.json next to W.json, or a run record — which the
// language server (completion, hover) and the dry run (package plan) both
// read, so that one file means the same to both.
//
// ParseResponses is the entry point.
package sidecar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Response is an example of one step's response.
type Response struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	// Body is the body as JSON: a JSON string is a text body as is, any
	// other value a JSON body.
	Body json.RawMessage `json:"body,omitempty"`
}

// ParseResponses reads example responses, by step index, in any of three
// forms:
//
//	{"0": {"status": 201, "headers": {…}, "body": {…}}, …}   by step index
//	[{"status": 201, …}, null, …]                            one per step, null for none
//	{"steps": [{"index": 0, "response": {…}}, …]}            a run record (kobana run -record)
func ParseResponses(data []byte) (map[int]*Response, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, fmt.Errorf("the file is empty")
	}
	out := map[int]*Response{}
	switch data[0] {
	case '[':
		var list []*Response
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, err
		}
		for i, r := range list {
			if r != nil {
				out[i] = r
			}
		}
		return out, nil
	case '{':
	default:
		return nil, fmt.Errorf("expected a JSON object or array")
	}
	var probe struct {
		Steps []struct {
			Index    *int      `json:"index"`
			Response *Response `json:"response"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(data, &probe); err == nil && probe.Steps != nil {
		for i, s := range probe.Steps {
			idx := i
			if s.Index != nil {
				idx = *s.Index
			}
			if s.Response != nil {
				out[idx] = s.Response
			}
		}
		return out, nil
	}
	var byIndex map[string]*Response
	if err := json.Unmarshal(data, &byIndex); err != nil {
		return nil, err
	}
	for k, r := range byIndex {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || strconv.Itoa(i) != k {
			return nil, fmt.Errorf("key %q is not a step index (0, 1, …)", k)
		}
		if r != nil {
			out[i] = r
		}
	}
	return out, nil
}
