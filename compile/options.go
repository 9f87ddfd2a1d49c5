package compile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kobana/workflow/egress"
	"github.com/kobana/workflow/internal/jsonpos"
	"github.com/kobana/workflow/internal/sendurl"
	"github.com/kobana/workflow/internal/suggest"
	"github.com/kobana/workflow/lang"
)

// Options say what the compiler knows about where a document will run,
// beyond the document itself. The zero Options know nothing: no rule that
// needs them is checked.
type Options struct {
	// SecretNames are the names of the workspace's secrets. When not nil,
	// a reference to any other name is an error (CodeUnknownSecret), with
	// a did-you-mean: the step would fail before sending.
	SecretNames []string
	// Policy says where requests may go. When not nil, a step whose host
	// is written literally and that the policy refuses is an error: a
	// secret it carries is bound elsewhere (CodeSecretDestination), or the
	// host is outside the egress list (CodeEgressDenied). It is the same
	// check, egress.Policy.Check, that the executor makes at send time on
	// the URL after substitution.
	Policy *egress.Policy
}

// placedSecret is a reference to a secret with its place in the document.
type placedSecret struct {
	ref *lang.Ref
	v   *jsonpos.Value
	ptr string
}

// checkSecretName reports a reference to a secret the workspace does not
// have, when its names are known.
func (sc *stepCompiler) checkSecretName(v *jsonpos.Value, ptr string, r *lang.Ref) {
	names := sc.opts.SecretNames
	if names == nil || slices.Contains(names, r.Key) {
		return
	}
	start := jsonpos.SourceOffset(sc.doc, v, r.Span.Start)
	end := jsonpos.SourceOffset(sc.doc, v, r.Span.End)
	var msg string
	switch {
	case len(names) == 0:
		msg = fmt.Sprintf("secret %q does not exist: the workspace has no secrets, so the step would fail before sending", r.Key)
	case len(names) > 20:
		msg = fmt.Sprintf("secret %q is not among the workspace's %d secrets, so the step would fail before sending", r.Key, len(names))
	default:
		msg = fmt.Sprintf("secret %q is not among the workspace's secrets (%s), so the step would fail before sending", r.Key, strings.Join(names, ", "))
	}
	sugg := ""
	if c := suggest.Closest(r.Key, names); c != "" {
		sugg = "${{secrets." + c + "}}"
		msg += fmt.Sprintf("; did you mean %s?", sugg)
	}
	sc.add(SeverityError, CodeUnknownSecret, ptr, start, end, sugg, "%s", msg)
}

// checkPolicy applies the policy to a step whose host its url shows
// literally: every secret the step references must be allowed to go
// there, and so must the host itself.
func (sc *stepCompiler) checkPolicy(u *jsonpos.Value) {
	p := sc.opts.Policy
	if p == nil || u == nil || !p.Restricts() {
		return
	}
	t, ok := sc.step.LiteralTarget()
	if !ok {
		return
	}
	var names []string
	for _, s := range sc.secrets {
		names = append(names, s.ref.Key)
	}
	for _, v := range p.Check(t, names) {
		if v.Secret == "" {
			sc.add(SeverityError, CodeEgressDenied, sc.base+"/url", u.Start, u.End, "", "step %d would not be sent: %s", sc.step.Index, v.Error())
			continue
		}
		for _, s := range sc.secrets {
			if s.ref.Key != v.Secret {
				continue
			}
			start := jsonpos.SourceOffset(sc.doc, s.v, s.ref.Span.Start)
			end := jsonpos.SourceOffset(sc.doc, s.v, s.ref.Span.End)
			sc.add(SeverityError, CodeSecretDestination, s.ptr, start, end, "", "step %d would not be sent: %s", sc.step.Index, v.Error())
		}
	}
}

// LiteralTarget is the host and port the step's request goes to when its
// url shows them literally: a url without placeholders, or one whose
// literal start holds the whole authority (https://erp.example.com/${{…}}).
// ok is false when a placeholder may still change the host.
func (s *Step) LiteralTarget() (egress.Target, bool) {
	text := s.URL.Source
	if !s.URL.IsLiteral() {
		first := s.URL.Segments[0]
		if first.Ref != nil {
			return egress.Target{}, false
		}
		text = first.Literal
		i := strings.Index(text, "://")
		if i < 0 {
			return egress.Target{}, false
		}
		end := strings.IndexAny(text[i+3:], "/?#")
		if end < 0 {
			return egress.Target{}, false // a placeholder may still add to the host
		}
		text = text[:i+3+end]
	}
	live, _, err := sendurl.Build(text, nil)
	if err != nil {
		return egress.Target{}, false
	}
	return egress.ParseTarget(live)
}
