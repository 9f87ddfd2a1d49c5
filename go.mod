module github.com/kobana/workflow

go 1.26.0

require (
	github.com/alecthomas/participle/v2 v2.1.4
	github.com/google/go-cmp v0.7.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/segmentio/asm v1.1.3
	github.com/valyala/fastjson v1.6.10
	github.com/valyala/fasttemplate v1.2.2
	golang.org/x/net v0.62.0
	golang.org/x/text v0.43.0
)

require (
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
