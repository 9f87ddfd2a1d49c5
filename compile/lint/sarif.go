package lint

import (
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/kobana/workflow/compile"
)

// SARIF constants of the log WriteSARIF prints.
const (
	SARIFSchema    = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	SARIFVersion   = "2.1.0"
	ToolName       = "validate-workflow"
	InformationURI = "https://github.com/kobana/workflow"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
	ColumnKind  string            `json:"columnKind"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string             `json:"id"`
	ShortDescription     sarifMessage       `json:"shortDescription"`
	FullDescription      sarifMessage       `json:"fullDescription"`
	HelpURI              string             `json:"helpUri"`
	Help                 sarifMessage       `json:"help"`
	DefaultConfiguration sarifConfiguration `json:"defaultConfiguration"`
}

type sarifConfiguration struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

type sarifResult struct {
	RuleID     string          `json:"ruleId"`
	RuleIndex  int             `json:"ruleIndex"`
	Level      string          `json:"level"`
	Message    sarifMessage    `json:"message"`
	Locations  []sarifLocation `json:"locations"`
	Properties *sarifProps     `json:"properties,omitempty"`
}

// sarifProps carries what SARIF has no field for: the JSON pointer of the
// value concerned and the suggested spelling.
type sarifProps struct {
	Pointer    string `json:"pointer,omitempty"`
	Suggestion string `json:"suggestion,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysicalLocation `json:"physicalLocation"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           *sarifRegion          `json:"region,omitempty"`
}

type sarifArtifactLocation struct {
	URI string `json:"uri"`
}

// sarifRegion gives the range three ways that agree: lines and columns
// (Unicode code points, as the run's columnKind says), character offset and
// length (code points), and byte offset and length.
type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn"`
	EndLine     int `json:"endLine"`
	EndColumn   int `json:"endColumn"`
	CharOffset  int `json:"charOffset"`
	CharLength  int `json:"charLength"`
	ByteOffset  int `json:"byteOffset"`
	ByteLength  int `json:"byteLength"`
}

// WriteSARIF prints the reports as one SARIF 2.1.0 run of validate-workflow,
// with one rule per diagnostic code; GitHub code scanning accepts it. An
// unreadable file becomes a tool execution notification and marks the run
// unsuccessful.
func WriteSARIF(w io.Writer, reports []Report) error {
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{
			Name: ToolName, InformationURI: InformationURI, Rules: make([]sarifRule, len(rules)),
		}},
		Results:    []sarifResult{},
		ColumnKind: "unicodeCodePoints",
	}
	index := make(map[string]int, len(rules))
	for i, r := range rules {
		index[r.Code] = i
		run.Tool.Driver.Rules[i] = sarifRule{
			ID:                   r.Code,
			ShortDescription:     sarifMessage{r.Summary},
			FullDescription:      sarifMessage{r.Summary},
			HelpURI:              HelpURI + r.Code,
			Help:                 sarifMessage{r.Summary + " See " + HelpURI + r.Code},
			DefaultConfiguration: sarifConfiguration{Level: r.Severity.String()},
		}
	}
	inv := sarifInvocation{ExecutionSuccessful: true}
	for _, rep := range reports {
		uri := fileURI(rep.File)
		if rep.Err != nil {
			inv.ExecutionSuccessful = false
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
				Level:     "error",
				Message:   sarifMessage{rep.Err.Error()},
				Locations: []sarifLocation{{sarifPhysicalLocation{ArtifactLocation: sarifArtifactLocation{uri}}}},
			})
			continue
		}
		for _, d := range rep.Diagnostics {
			i, ok := index[d.Code]
			if !ok {
				// A code newer than this table: describe it by its own name.
				i = len(run.Tool.Driver.Rules)
				index[d.Code] = i
				run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
					ID: d.Code, ShortDescription: sarifMessage{d.Code}, FullDescription: sarifMessage{d.Code},
					HelpURI: HelpURI + d.Code, Help: sarifMessage{d.Code},
					DefaultConfiguration: sarifConfiguration{Level: d.Severity.String()},
				})
			}
			res := sarifResult{
				RuleID: d.Code, RuleIndex: i, Level: d.Severity.String(),
				Message: sarifMessage{d.Message},
				Locations: []sarifLocation{{sarifPhysicalLocation{
					ArtifactLocation: sarifArtifactLocation{uri},
					Region:           region(rep.Source, d.Range),
				}}},
			}
			if d.Pointer != "" || d.Suggestion != "" {
				res.Properties = &sarifProps{Pointer: d.Pointer, Suggestion: d.Suggestion}
			}
			run.Results = append(run.Results, res)
		}
	}
	run.Invocations = []sarifInvocation{inv}
	return encodeJSON(w, sarifLog{Schema: SARIFSchema, Version: SARIFVersion, Runs: []sarifRun{run}})
}

func region(doc []byte, r compile.Range) *sarifRegion {
	start := clamp(r.Start.Byte, 0, len(doc))
	end := clamp(r.End.Byte, start, len(doc))
	charOff := utf8.RuneCount(doc[:start])
	return &sarifRegion{
		StartLine: r.Start.Line, StartColumn: r.Start.Column,
		EndLine: r.End.Line, EndColumn: r.End.Column,
		CharOffset: charOff, CharLength: utf8.RuneCount(doc[start:end]),
		ByteOffset: start, ByteLength: end - start,
	}
}

// fileURI turns a file name into a SARIF artifact URI: a relative path stays
// relative (GitHub resolves it against the repository root), an absolute
// one becomes a file: URI.
func fileURI(name string) string {
	p := filepath.ToSlash(name)
	if filepath.IsAbs(name) {
		if !strings.HasPrefix(p, "/") {
			p = "/" + p // a Windows drive path
		}
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: p}).String()
}
