package kustomize

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file implements the variable expansion of Flux's post-build
// substitution: the bash-like ${...} dialect of drone/envsubst as forked in
// fluxcd/pkg/envsubst. It is written from that dialect's documented and
// observed behaviour, quirks included, because manifests in the wild depend
// on them:
//
//   - Only ${...} expands. A bare $var is left alone, and $$ writes one $
//     (so $${var} renders as the literal ${var}).
//   - Forms: ${var}, ${#var} (length in bytes), ${var^} ${var^^} ${var,}
//     ${var,,} (case), ${var:pos} ${var:pos:len} (byte offsets; a negative
//     pos counts from the end), ${var#pat} ${var##pat} ${var%pat}
//     ${var%%pat} (trim by glob), ${var/pat/rep} ${var//pat/rep}
//     ${var/#pat/rep} ${var/%pat/rep} (replace literal text), and the
//     defaults ${var=def} ${var:=def} ${var:-def}. All defaults apply when
//     the value is empty or unset; ${var:?x} and ${var:+x} parse and behave
//     like defaults too. ${var-def}, ${var+def} and ${var?x} do not parse.
//   - Arguments may nest expansions: ${a:=${b}-x}. Only the pattern and the
//     replacement of the replace forms know escapes: \/ and \\ and $$.
//   - Globs: * and ? match any character, slash included; [...] classes as
//     in Go's path.Match. Trimming from the end reverses both the value and
//     the pattern, as the original does.
//   - Strict mode: an unset variable is an error unless the form supplies a
//     default.

// Errors of the expansion syntax, with the original's wording.
var (
	errBadSubstitution       = errors.New("bad substitution")
	errMissingClosingBrace   = errors.New("missing closing brace")
	errParseVariableName     = errors.New("unable to parse variable name")
	errParseFuncSubstitution = errors.New("unable to parse substitution within function")
)

// Operators of an expansion. opNone is a plain ${var}.
const (
	opNone     = ""
	opLength   = "len"
	opSubstr   = ":"
	opDefault  = "="
	opReplace1 = "/"
	opReplaceN = "//"
	opReplaceP = "/#"
	opReplaceS = "/%"
)

// exprNode is text or an expansion.
type exprNode interface{ isNode() }

type textNode string

type expansion struct {
	param string
	op    string
	args  []exprNode
}

func (textNode) isNode()   {}
func (*expansion) isNode() {}

// expander is a parser over one input string.
type expander struct {
	src string
	pos int
}

// parseExpansions splits s into text and expansions.
func parseExpansions(s string) ([]exprNode, error) {
	e := &expander{src: s}
	var nodes []exprNode
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			nodes = append(nodes, textNode(text.String()))
			text.Reset()
		}
	}
	for e.pos < len(s) {
		if s[e.pos] == '$' && e.pos+1 < len(s) {
			switch s[e.pos+1] {
			case '{':
				flush()
				e.pos += 2
				n, err := e.expansion()
				if err != nil {
					return nil, err
				}
				nodes = append(nodes, n)
				continue
			case '$':
				text.WriteByte('$')
				e.pos += 2
				continue
			}
		}
		text.WriteByte(s[e.pos])
		e.pos++
	}
	flush()
	return nodes, nil
}

func (e *expander) peek() byte { return e.peekAt(0) }

func (e *expander) peekAt(n int) byte {
	if e.pos+n < len(e.src) {
		return e.src[e.pos+n]
	}
	return 0
}

func (e *expander) eof() bool { return e.pos >= len(e.src) }

func (e *expander) closeBrace() error {
	if e.peek() != '}' {
		return errBadSubstitution
	}
	e.pos++
	return nil
}

// ident reads a variable name: letters, digits and underscores.
func (e *expander) ident() string {
	start := e.pos
	for e.pos < len(e.src) {
		r, w := utf8.DecodeRuneInString(e.src[e.pos:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' {
			break
		}
		e.pos += w
	}
	return e.src[start:e.pos]
}

// expansion parses what follows "${".
func (e *expander) expansion() (exprNode, error) {
	if e.peek() == '#' {
		e.pos++
		name := e.ident()
		if name == "" {
			return nil, errBadSubstitution
		}
		return &expansion{param: name, op: opLength}, e.closeBrace()
	}
	name := e.ident()
	if name == "" {
		return nil, errParseVariableName
	}
	switch e.peek() {
	case ':':
		switch e.peekAt(1) {
		case '=', '-', '?', '+':
			return e.defaultForm(name)
		}
		return e.substrForm(name)
	case '=':
		return e.defaultForm(name)
	case ',', '^':
		return e.caseForm(name)
	case '/':
		return e.replaceForm(name)
	case '#', '%':
		return e.trimForm(name, e.peek())
	case '}':
		e.pos++
		return &expansion{param: name}, nil
	}
	return nil, errMissingClosingBrace
}

// arg parses one argument: a nested expansion, or a run of text whose
// characters satisfy accept. With escapes, \/ \\ and $$ stand for / \ $.
func (e *expander) arg(accept func(rune) bool, escapes bool) (exprNode, error) {
	if e.eof() {
		return nil, errParseFuncSubstitution
	}
	if e.peek() == '$' && e.peekAt(1) == '{' {
		e.pos += 2
		return e.expansion()
	}
	var b strings.Builder
	consumed := false
	for !e.eof() {
		c, next := e.peek(), e.peekAt(1)
		if c == '$' && next == '{' {
			break
		}
		if escapes && ((c == '$' && next == '$') || (c == '\\' && (next == '/' || next == '\\'))) {
			b.WriteByte(next)
			e.pos += 2
			consumed = true
			continue
		}
		r, w := utf8.DecodeRuneInString(e.src[e.pos:])
		if !accept(r) {
			break
		}
		b.WriteString(e.src[e.pos : e.pos+w])
		e.pos += w
		consumed = true
	}
	if !consumed {
		return nil, errParseFuncSubstitution
	}
	return textNode(b.String()), nil
}

func notClosing(r rune) bool { return r != '}' }

// defaultForm parses ${var=...} and ${var:=...}, ${var:-...}, ${var:?...},
// ${var:+...}; the default may mix text and expansions.
func (e *expander) defaultForm(name string) (exprNode, error) {
	if e.peek() == '=' {
		e.pos++
	} else {
		e.pos += 2
	}
	n := &expansion{param: name, op: opDefault}
	for e.peek() != '}' || e.eof() {
		a, err := e.arg(notClosing, false)
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, a)
	}
	e.pos++
	return n, nil
}

// substrForm parses ${var:pos} and ${var:pos:len}.
func (e *expander) substrForm(name string) (exprNode, error) {
	e.pos++
	n := &expansion{param: name, op: opSubstr}
	offset, err := e.arg(func(r rune) bool { return r != ':' && r != '}' }, false)
	if err != nil {
		return nil, err
	}
	n.args = append(n.args, offset)
	switch e.peek() {
	case '}':
		e.pos++
		return n, nil
	case ':':
		for e.peek() == ':' {
			e.pos++
		}
	default:
		return nil, errBadSubstitution
	}
	length, err := e.arg(notClosing, false)
	if err != nil {
		return nil, err
	}
	n.args = append(n.args, length)
	return n, e.closeBrace()
}

// trimForm parses ${var#pat}, ${var##pat}, ${var%pat}, ${var%%pat}.
func (e *expander) trimForm(name string, c byte) (exprNode, error) {
	op := string(c)
	e.pos++
	if e.peek() == c {
		op += string(c)
		e.pos++
	}
	pattern, err := e.arg(notClosing, false)
	if err != nil {
		return nil, err
	}
	return &expansion{param: name, op: op, args: []exprNode{pattern}}, e.closeBrace()
}

// replaceForm parses ${var/pat/rep}, ${var//pat/rep}, ${var/#pat/rep},
// ${var/%pat/rep}; the replacement may be empty.
func (e *expander) replaceForm(name string) (exprNode, error) {
	e.pos++
	op := opReplace1
	switch e.peek() {
	case '/', '#', '%':
		op += string(e.peek())
		e.pos++
	}
	n := &expansion{param: name, op: op}
	if e.peek() == '/' {
		n.args = append(n.args, textNode(""))
	} else {
		pattern, err := e.arg(func(r rune) bool { return r != '/' }, true)
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, pattern)
	}
	if e.peek() != '/' {
		return nil, errBadSubstitution
	}
	for e.peek() == '/' {
		e.pos++
	}
	if e.peek() == '}' {
		e.pos++
		return n, nil
	}
	rep, err := e.arg(notClosing, true)
	if err != nil {
		return nil, err
	}
	n.args = append(n.args, rep)
	return n, e.closeBrace()
}

// caseForm parses ${var^}, ${var^^}, ${var,}, ${var,,}.
func (e *expander) caseForm(name string) (exprNode, error) {
	start := e.pos
	for e.pos-start < 2 && (e.peek() == ',' || e.peek() == '^') {
		e.pos++
	}
	return &expansion{param: name, op: e.src[start:e.pos]}, e.closeBrace()
}

// lookupFunc resolves a variable: its value and whether it is defined.
type lookupFunc func(name string) (string, bool)

// expand evaluates s against lookup.
func expand(s string, lookup lookupFunc) (string, error) {
	nodes, err := parseExpansions(s)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, n := range nodes {
		v, err := evalNode(n, lookup)
		if err != nil {
			return "", err
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

func evalNode(n exprNode, lookup lookupFunc) (string, error) {
	switch t := n.(type) {
	case textNode:
		return string(t), nil
	case *expansion:
		args := make([]string, 0, len(t.args))
		for _, a := range t.args {
			v, err := evalNode(a, lookup)
			if err != nil {
				return "", err
			}
			args = append(args, v)
		}
		v, ok := lookup(t.param)
		if !ok && t.op != opDefault {
			return "", fmt.Errorf("%w: %q", ErrVariableNotSet, t.param)
		}
		return apply(t.op, v, args), nil
	}
	return "", nil
}

func apply(op, v string, args []string) string {
	switch op {
	case opLength:
		return strconv.Itoa(len(v))
	case "^":
		return mapFirstRune(v, unicode.ToUpper)
	case "^^":
		return strings.ToUpper(v)
	case ",":
		return mapFirstRune(v, unicode.ToLower)
	case ",,":
		return strings.ToLower(v)
	case opSubstr:
		return substring(v, args)
	case "#":
		return trimPrefixGlob(v, args[0], false)
	case "##":
		return trimPrefixGlob(v, args[0], true)
	case "%":
		return reverse(trimPrefixGlob(reverse(v), reverse(args[0]), false))
	case "%%":
		return reverse(trimPrefixGlob(reverse(v), reverse(args[0]), true))
	case opReplace1, opReplaceN, opReplaceP, opReplaceS:
		return replace(op, v, args)
	}
	// Plain ${var}, the defaults, and the mixed case forms (",^").
	if v == "" && len(args) > 0 {
		return strings.Join(args, "")
	}
	return v
}

// replace implements the four replace forms; the pattern is literal text.
func replace(op, v string, args []string) string {
	switch op {
	case opReplaceP:
		if len(args) == 2 && strings.HasPrefix(v, args[0]) {
			return args[1] + v[len(args[0]):]
		}
		return v
	case opReplaceS:
		if len(args) == 2 && strings.HasSuffix(v, args[0]) {
			return v[:len(v)-len(args[0])] + args[1]
		}
		return v
	}
	n := 1
	if op == opReplaceN {
		n = -1
	}
	if len(args) == 1 {
		return strings.Replace(v, args[0], "", n)
	}
	return strings.Replace(v, args[0], args[1], n)
}

func mapFirstRune(s string, f func(rune) rune) string {
	if s == "" {
		return s
	}
	r, w := utf8.DecodeRuneInString(s)
	return string(f(r)) + s[w:]
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// substring implements ${var:pos} and ${var:pos:len} on bytes; an
// unparsable number leaves the value unchanged, as bash does.
func substring(s string, args []string) string {
	pos, err := strconv.Atoi(args[0])
	if err != nil {
		return s
	}
	if pos < 0 {
		pos = max(len(s)+pos, 0)
	}
	if len(args) == 1 {
		if pos < len(s) {
			return s[pos:]
		}
		return ""
	}
	length, err := strconv.Atoi(args[1])
	if err != nil {
		return s
	}
	if pos >= len(s) {
		return ""
	}
	if length < 0 {
		// A negative length counts back from the end: ${v:1:-1} drops the
		// first and the last byte.
		end := len(s) + length
		if end < pos {
			return ""
		}
		return s[pos:end]
	}
	if length >= len(s)-pos {
		return s[pos:]
	}
	return s[pos : pos+length]
}

// trimPrefixGlob removes from s the shortest (or longest) non-empty prefix
// matching pattern. A malformed pattern leaves s unchanged.
func trimPrefixGlob(s, pattern string, longest bool) string {
	g, err := compileGlob(pattern)
	if err != nil {
		return s
	}
	match := ""
	for i := 0; i < len(s); i++ {
		prefix := s[:len(s)-i]
		if g.match(prefix) {
			match = prefix
			if longest {
				break
			}
		}
	}
	return s[len(match):]
}

// ExpandText evaluates the ${…} expressions of text against vars with the
// engine post-build substitution uses, as plain text: no YAML is parsed.
// With strict, a variable without a value or default is an error;
// otherwise it becomes "".
func ExpandText(text string, vars map[string]string, strict bool) (string, error) {
	return expand(text, func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok || !strict
	})
}
