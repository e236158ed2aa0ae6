package web

import (
	"fmt"
	"io/fs"
	"math"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func readAsset(t *testing.T, name string) string {
	t.Helper()
	b, err := fs.ReadFile(FS(), name)
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return string(b)
}

func jsFiles(t *testing.T) []string {
	t.Helper()
	files, err := fs.Glob(FS(), "js/*.js")
	if err != nil || len(files) == 0 {
		t.Fatalf("no JavaScript modules embedded (%v)", err)
	}
	return files
}

var importRE = regexp.MustCompile(`(?m)^import .* from '(\./[a-z]+\.js)';$`)

// Every module the entry point reaches is embedded: a missing file would
// only show as a 404 in the browser.
func TestImportsResolve(t *testing.T) {
	for _, f := range jsFiles(t) {
		for _, m := range importRE.FindAllStringSubmatch(readAsset(t, f), -1) {
			if _, err := fs.Stat(FS(), path.Join("js", m[1])); err != nil {
				t.Errorf("%s imports %s, which is not embedded", f, m[1])
			}
		}
	}
	index := readAsset(t, "index.html")
	for _, ref := range []string{`src="/js/main.js"`, `href="/app.css"`} {
		if !strings.Contains(index, ref) {
			t.Errorf("index.html does not load %s", ref)
		}
	}
}

// The server's CSP is default-src 'self': inline scripts, style attributes
// and anything from another origin would be refused by the browser.
func TestNothingTheCSPRefuses(t *testing.T) {
	index := readAsset(t, "index.html")
	bad := []struct{ name, re string }{
		{"inline script", `<script(?:\s[^>]*)?>\s*[^<\s]`},
		{"style element", `<style`},
		{"style attribute", `\sstyle=`},
		{"event handler attribute", `\son[a-z]+=`},
		{"remote URL", `(?:src|href)="(?:https?:)?//`},
		{"data URL", `(?:src|href)="data:`},
	}
	for _, b := range bad {
		if regexp.MustCompile(b.re).MatchString(index) {
			t.Errorf("index.html has a %s", b.name)
		}
	}
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(index, -1) {
		if !strings.Contains(tag, ` src="/`) {
			t.Errorf("index.html has a script without a local src: %s", tag)
		}
	}
	remote := regexp.MustCompile(`https?://`)
	for _, f := range jsFiles(t) {
		src := readAsset(t, f)
		for _, forbidden := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "eval(", "new Function", "'style'", "document.write"} {
			if strings.Contains(src, forbidden) {
				t.Errorf("%s uses %s", f, forbidden)
			}
		}
		for _, u := range remote.FindAllStringIndex(src, -1) {
			if !strings.HasPrefix(src[u[0]:], "http://www.w3.org/2000/svg") {
				t.Errorf("%s names a remote URL at byte %d", f, u[0])
			}
		}
	}
	if strings.Contains(readAsset(t, "app.css"), "@import") || remote.MatchString(readAsset(t, "app.css")) {
		t.Error("app.css loads something from elsewhere")
	}
}

// schemes returns the custom properties of the light :root block and of the
// dark one (prefers-color-scheme), the dark one over the light one.
func schemes(t *testing.T) map[string]map[string]string {
	t.Helper()
	css := readAsset(t, "app.css")
	decl := regexp.MustCompile(`(--[a-z-]+):\s*(#[0-9a-f]{6});`)
	parse := func(block string) map[string]string {
		m := map[string]string{}
		for _, d := range decl.FindAllStringSubmatch(block, -1) {
			m[d[1]] = d[2]
		}
		return m
	}
	darkAt := strings.Index(css, "@media (prefers-color-scheme: dark)")
	if darkAt < 0 {
		t.Fatal("app.css has no dark scheme")
	}
	light := parse(css[:darkAt])
	dark := parse(light2dark(css[darkAt:]))
	for k, v := range light {
		if _, ok := dark[k]; !ok {
			t.Errorf("the dark scheme does not set %s (light: %s)", k, v)
		}
	}
	return map[string]map[string]string{"light": light, "dark": dark}
}

// light2dark cuts the dark @media block out of the rest of the CSS.
func light2dark(css string) string {
	depth := 0
	for i, r := range css {
		switch r {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return css[:i]
			}
		}
	}
	return css
}

// relativeLuminance follows WCAG 2.x.
func relativeLuminance(hex string) (float64, error) {
	v, err := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	if err != nil {
		return 0, fmt.Errorf("colour %q: %w", hex, err)
	}
	ch := func(c uint64) float64 {
		s := float64(c) / 255
		if s <= 0.03928 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*ch(v>>16&0xff) + 0.7152*ch(v>>8&0xff) + 0.0722*ch(v&0xff), nil
}

func contrast(a, b string) (float64, error) {
	la, err := relativeLuminance(a)
	if err != nil {
		return 0, err
	}
	lb, err := relativeLuminance(b)
	if err != nil {
		return 0, err
	}
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05), nil
}

func TestContrastFormula(t *testing.T) {
	tests := []struct {
		a, b string
		want float64
	}{
		{"#000000", "#ffffff", 21},
		{"#ffffff", "#ffffff", 1},
		{"#767676", "#ffffff", 4.54},
		{"#777777", "#ffffff", 4.48},
	}
	for _, tt := range tests {
		got, err := contrast(tt.a, tt.b)
		if err != nil || math.Abs(got-tt.want) > 0.01 {
			t.Errorf("contrast(%s, %s) = %.3f, %v; want %.2f", tt.a, tt.b, got, err, tt.want)
		}
	}
}

// Every text colour of the stylesheet against every background it is used
// on, in both schemes: at least 4.5:1 (WCAG AA for normal text).
func TestContrastOfEveryPair(t *testing.T) {
	for name, vars := range schemes(t) {
		pairs := [][2]string{
			{"--fg", "--bg"}, {"--fg", "--panel"}, {"--muted", "--bg"}, {"--muted", "--panel"},
			{"--link", "--bg"}, {"--link", "--panel"}, {"--focus", "--bg"},
		}
		for k := range vars {
			if base, ok := strings.CutSuffix(k, "-fg"); ok {
				pairs = append(pairs, [2]string{k, base + "-bg"})
			}
		}
		for _, p := range pairs {
			fg, bg := vars[p[0]], vars[p[1]]
			if fg == "" || bg == "" {
				t.Errorf("%s: %s or %s not set", name, p[0], p[1])
				continue
			}
			c, err := contrast(fg, bg)
			if err != nil {
				t.Fatal(err)
			}
			if c < 4.5 {
				t.Errorf("%s: %s %s on %s %s is %.2f:1, below 4.5", name, p[0], fg, p[1], bg, c)
			}
		}
	}
}
