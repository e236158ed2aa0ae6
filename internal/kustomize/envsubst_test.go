package kustomize

import (
	"errors"
	"strings"
	"testing"
)

func lookupIn(vars map[string]string, strict bool) lookupFunc {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok || !strict
	}
}

func TestExpand(t *testing.T) {
	path := map[string]string{"p": "/home/bozo/ideas/thoughts.for.today"}
	file := map[string]string{"f": "bash.string.txt"}
	z := map[string]string{"z": "abcABC123ABCabc"}
	tests := []struct {
		name string
		vars map[string]string
		in   string
		want string
	}{
		{"text only", nil, "abcdEFGH28ij", "abcdEFGH28ij"},
		{"plain", map[string]string{"v": "x"}, "a ${v} b", "a x b"},
		{"bare $var stays", map[string]string{"v": "x"}, "echo $v $ $", "echo $v $ $"},
		{"unicode name", map[string]string{"héllo": "x"}, "${héllo}", "x"},
		{"length in bytes", map[string]string{"v": "héllo"}, "${#v}", "6"},
		{"upper first", map[string]string{"v": "abc"}, "${v^}", "Abc"},
		{"upper", map[string]string{"v": "abc"}, "${v^^}", "ABC"},
		{"lower first", map[string]string{"v": "ABC"}, "${v,}", "aBC"},
		{"lower", map[string]string{"v": "ABC"}, "${v,,}", "abc"},
		{"mixed case ops leave the value", map[string]string{"v": "aBc"}, "${v,^}", "aBc"},
		{"substring from", path, "${p:11}", "ideas/thoughts.for.today"},
		{"substring from and length", path, "${p:11:5}", "ideas"},
		{"substring negative length", map[string]string{"v": "abcdef"}, "${v:1:-1}", "bcde"},
		{"substring past the end", map[string]string{"v": "abc"}, "${v:5}", ""},
		{"substring long length", map[string]string{"v": "abc"}, "${v:1:99}", "bc"},
		{"substring bad number", map[string]string{"v": "abc"}, "${v:x}", "abc"},
		{"substring nested", map[string]string{"v": "abcdef", "n": "2"}, "${v:${n}:2}", "cd"},
		{"colon-dash is a default, not a negative offset", map[string]string{"v": "abc"}, "${v:-1}", "abc"},
		{"default := unused", map[string]string{"v": "abc"}, "${v:=xyz}", "abc"},
		{"default := used", nil, "${v:=xyz}", "xyz"},
		{"default = used", nil, "${v=xyz}", "xyz"},
		{"default :- used", nil, "${v:-xyz}", "xyz"},
		{"default applies to empty values too", map[string]string{"v": ""}, "${v=xyz}", "xyz"},
		{"default :? behaves as default", nil, "${v:?xyz}", "xyz"},
		{"default :+ behaves as default", map[string]string{"v": "set"}, "${v:+xyz}", "set"},
		{"empty default", nil, "[${v:=}]", "[]"},
		{"default with nested", map[string]string{"d": "foo"}, "${v=${d}}", "foo"},
		{"default mixing text and nested", map[string]string{"d": "foo"}, "${v=pre-${d}-suf}", "pre-foo-suf"},
		{"default with transformed nested", map[string]string{"d": "abc"}, "${v=${d^^}}", "ABC"},
		{"default keeps $$ literally", map[string]string{"b": "x"}, "${v:=$$b}", "$$b"},
		{"replace first", z, "${z/abc/xyz}", "xyzABC123ABCabc"},
		{"replace all", z, "${z//abc/xyz}", "xyzABC123ABCxyz"},
		{"replace prefix", z, "${z/#abc/XYZ}", "XYZABC123ABCabc"},
		{"replace suffix", z, "${z/%abc/XYZ}", "abcABC123ABCXYZ"},
		{"prepend with empty prefix pattern", map[string]string{"v": "value"}, "${v/#/pre-}", "pre-value"},
		{"append with empty suffix pattern", map[string]string{"v": "value"}, "${v/%/-suf}", "value-suf"},
		{"delete with empty replacement", map[string]string{"v": "foo.bar"}, "${v/./}", "foobar"},
		{"escaped slash in pattern", map[string]string{"v": "foo/bar/baz"}, `${v//\//-}`, "foo-bar-baz"},
		{"escaped slash in replacement", map[string]string{"v": "a-b"}, `${v/-/\/}`, "a/b"},
		{"escaped backslash", map[string]string{"v": `a\b`}, `${v/\\/+}`, "a+b"},
		{"nested pattern and replacement", map[string]string{"v": "a.b", "x": ".", "y": "_"}, "${v//${x}/${y}}", "a_b"},
		{"trim shortest prefix", file, "${f#*.}", "string.txt"},
		{"trim longest prefix", file, "${f##*.}", "txt"},
		{"trim shortest suffix", file, "${f%.*}", "bash.string"},
		{"trim longest suffix", file, "${f%%.*}", "bash"},
		{"star matches slashes", map[string]string{"f": "/path/to/file"}, "${f##*/}", "file"},
		{"trim with class", map[string]string{"f": "v1.2.3"}, "${f#[a-z]}", "1.2.3"},
		{"trim never removes an empty prefix", map[string]string{"f": "abc"}, "${f#*}", "bc"},
		{"trim with no match", map[string]string{"f": "abc"}, "${f#x*}", "abc"},
		{"trim with malformed pattern", map[string]string{"f": "abc"}, "${f#[}", "abc"},
		{"escape", map[string]string{"v": "x"}, "$${v}", "${v}"},
		{"escape before an expansion", map[string]string{"v": "x"}, "$$${v}", "$x"},
		{"double dollar alone", nil, "$$v $$", "$v $"},
		{"escapes mixed", map[string]string{"v": "abc"}, "some ${v}$${var$${v}$v${v}", "some abc${var${v}$vabc"},
		{"escaped default", map[string]string{"d": "foo"}, "x $${v=${d}}", "x ${v=foo}"},
		{"backslashes outside expansions are literal", map[string]string{"d": "foo"}, `\\x ${v=${d}}`, `\\x foo`},
		{"closing brace outside is text", nil, "}text{", "}text{"},
		{"url is text", nil, "http://github.com", "http://github.com"},
		{"quote idiom", map[string]string{"q": `"`, "id": "123"}, "id: ${q}${id}${q}", `id: "123"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := expand(tt.in, lookupIn(tt.vars, false))
			if err != nil {
				t.Fatalf("expand(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("expand(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestExpandStrict(t *testing.T) {
	for _, in := range []string{
		"${missing}", "${#missing}", "${missing^}", "${missing^^}", "${missing,}", "${missing,,}",
		"${missing:0}", "${missing:0:10}", "${missing/a/b}", "${missing//a/b}", "${missing/#a/b}",
		"${missing/%a/b}", "${missing#a}", "${missing##a}", "${missing%a}", "${missing%%a}",
		"${set:=${missing}}",
	} {
		t.Run(in, func(t *testing.T) {
			_, err := expand(in, lookupIn(map[string]string{"set": ""}, true))
			if !errors.Is(err, ErrVariableNotSet) || !strings.Contains(err.Error(), `"missing"`) {
				t.Fatalf("want ErrVariableNotSet naming missing, got %v", err)
			}
		})
	}
	for in, want := range map[string]string{
		"${missing:-fallback}": "fallback",
		"${missing:=assigned}": "assigned",
		"${missing=assigned}":  "assigned",
		"${empty}":             "",
		"$missing":             "$missing",
		"$${missing}":          "${missing}",
	} {
		got, err := expand(in, lookupIn(map[string]string{"empty": ""}, true))
		if err != nil || got != want {
			t.Errorf("strict expand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestExpandSyntaxErrors(t *testing.T) {
	tests := map[string]error{
		"${":          errParseVariableName,
		"${}":         errParseVariableName,
		"${ v}":       errParseVariableName,
		"${v":         errMissingClosingBrace,
		"${v }":       errMissingClosingBrace,
		"${v-def}":    errMissingClosingBrace, // bash's ${v-def} is not in this dialect
		"${v+def}":    errMissingClosingBrace,
		"${#}":        errBadSubstitution,
		"${#v:1}":     errBadSubstitution,
		"${v:}":       errParseFuncSubstitution,
		"${v:1:}":     errParseFuncSubstitution,
		"${v:1x${y}}": errBadSubstitution,
		"${v#}":       errParseFuncSubstitution,
		"${v/a}":      errBadSubstitution,
		"${v^x}":      errBadSubstitution,
		"${v:=abc":    errParseFuncSubstitution,
		"${v//x}":     errBadSubstitution,
	}
	for in, want := range tests {
		_, err := expand(in, lookupIn(nil, false))
		if !errors.Is(err, want) {
			t.Errorf("expand(%q) error = %v, want %v", in, err, want)
		}
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "a/b", true},
		{"a*c", "abc", true},
		{"a*c", "ab/c", true},
		{"a?c", "a/c", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"[a-c]x", "bx", true},
		{"[^a-c]x", "bx", false},
		{"[^a-c]x", "dx", true},
		{`\*`, "*", true},
		{`\*`, "a", false},
		{"é?", "éa", true},
	}
	for _, tt := range tests {
		g, err := compileGlob(tt.pattern)
		if err != nil {
			t.Fatalf("compile %q: %v", tt.pattern, err)
		}
		if got := g.match(tt.s); got != tt.want {
			t.Errorf("%q matches %q = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
	for _, bad := range []string{"[", "[]", "[a-", `\`, "[a", "[-a]"} {
		if _, err := compileGlob(bad); err == nil {
			t.Errorf("compile %q succeeded", bad)
		}
	}
}

// FuzzSubstitute feeds arbitrary templates and values to the expansion
// engine: it must never panic, must be deterministic, and must leave text
// without "$" untouched.
func FuzzSubstitute(f *testing.F) {
	for _, seed := range []string{
		"${v}", "$${v}", "${v:=d}", "${v:1:2}", "${v/a/b}", "${v//\\//-}", "${#v}", "${v^^}",
		"${v%%.*}", "${v##*/}", "${v:=${w}-x}", "${v", "${v:", "${v/", "${[", "${v#[}", "$$$$",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name:=cm}\ndata:\n  k: \"${v}\"\n",
	} {
		f.Add(seed, "abc/def.ghi", false)
	}
	f.Fuzz(func(t *testing.T, tmpl, value string, strict bool) {
		vars := map[string]string{"v": value, "w": value + value}
		got, err := expand(tmpl, lookupIn(vars, strict))
		again, err2 := expand(tmpl, lookupIn(vars, strict))
		if got != again || (err == nil) != (err2 == nil) {
			t.Fatalf("nondeterministic on %q", tmpl)
		}
		if !strings.Contains(tmpl, "$") && (err != nil || got != tmpl) {
			t.Fatalf("text without $ changed: %q -> %q, %v", tmpl, got, err)
		}
		if !strings.Contains(tmpl, "${") && (err != nil || got != collapseDollars(tmpl)) {
			t.Fatalf("text without expansions: %q -> %q, %v", tmpl, got, err)
		}
		// The object-level path must not panic either.
		_, _ = Substitute(nil, vars, SubstituteOptions{})
	})
}

// collapseDollars is the reference for text outside expansions: each "$$",
// read left to right, becomes "$".
func collapseDollars(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte(s[i])
		if s[i] == '$' && i+1 < len(s) && s[i+1] == '$' {
			i++
		}
	}
	return b.String()
}
