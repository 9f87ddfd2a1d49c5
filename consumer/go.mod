module github.com/kobana/workflow/consumer

go 1.26.0

require github.com/kobana/workflow v0.1.0

require (
	github.com/alecthomas/participle/v2 v2.1.4 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/valyala/fastjson v1.6.10 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

replace github.com/kobana/workflow => ../
