package mcpserver

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The framework answers some requests itself and must put on the wire what
// the SDK would have: these wrappers adjust the JSON of a result and are
// served in its place (they embed the result, so they remain mcp.Results).

// completeRead is a resources/read result on 2026-07-28: the framework
// serves reads itself (see Server.middleware), so it stamps the resultType
// the protocol requires there.
type completeRead struct{ *mcp.ReadResourceResult }

// MarshalJSON adds "resultType": "complete" (the embedded result has no
// resultType of its own: the SDK never saw it).
func (r completeRead) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.ReadResourceResult)
	if err != nil {
		return nil, err
	}
	return withMember(b, "resultType", `"complete"`), nil
}

// inputRequired is a tools/call result asking for input: the SDK writes its
// (necessarily empty) content as "content": null, which is no member of an
// InputRequiredResult; it is left out.
type inputRequired struct{ *mcp.CallToolResult }

// MarshalJSON drops the null content.
func (r inputRequired) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.CallToolResult)
	if err != nil {
		return nil, err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return nil, err
	}
	if c, ok := members["content"]; ok && bytes.Equal(bytes.TrimSpace(c), []byte("null")) {
		delete(members, "content")
	}
	return json.Marshal(members)
}

// withMember appends "key": value to the JSON object obj, which must not
// have that key yet.
func withMember(obj []byte, key, value string) []byte {
	end := bytes.LastIndexByte(obj, '}')
	if end < 0 {
		return obj
	}
	head := bytes.TrimSpace(obj[:end])
	out := make([]byte, 0, len(obj)+len(key)+len(value)+4)
	out = append(out, head...)
	if !bytes.Equal(head, []byte("{")) {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, key...)
	out = append(out, `":`...)
	out = append(out, value...)
	return append(out, '}')
}
