package layering

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the module's root, from this package's directory.
const root = "../.."

// TestReadmeLayoutNamesOnlyWhatExists reads the README's layout block and
// its table of parts: every folder and package they name exists, and every
// area under internal/ has its line in the block.
//
// The block is a tree: a line at column 0 names top-level folders, a line
// indented by two names areas of internal/, and a line indented further
// goes on with the description above it. The names of a line are the
// words before its first run of two spaces. In the descriptions of cmd/
// and of the areas, the comma-, semicolon- or colon-separated parts that
// are one path-like word (git, controller/{bucket,helmchart}, testenv/)
// are packages under that folder; text in parentheses and parts of more
// than one word are prose.
func TestReadmeLayoutNamesOnlyWhatExists(t *testing.T) {
	readme := readFile(t, "README.md")
	block := layoutBlock(t, readme)
	areas := map[string]bool{}
	for _, e := range parseLayout(block) {
		base := ""
		if e.area {
			base = "internal/"
		}
		for _, name := range e.names {
			dir := base + strings.TrimSuffix(name, "/")
			if !isDir(dir) {
				t.Errorf("README layout names %s/, which does not exist", dir)
				continue
			}
			if e.area {
				areas[dir] = true
			}
		}
		if !e.area && !slices.Equal(e.names, []string{"cmd/"}) {
			continue
		}
		for _, pkg := range packageWords(e.description) {
			if !slices.ContainsFunc(e.names, func(name string) bool {
				return exists(filepath.Join(base+name, pkg))
			}) {
				t.Errorf("README layout: %s names %s, which does not exist there", strings.Join(e.names, " "), pkg)
			}
		}
	}
	dirs, err := os.ReadDir(filepath.Join(root, "internal"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if d.IsDir() && !areas["internal/"+d.Name()] {
			t.Errorf("README layout has no line for internal/%s/", d.Name())
		}
	}

	_, parts, found := strings.Cut(readme, "## What is here today\n")
	if !found {
		t.Fatal("README has no \"What is here today\" section")
	}
	parts, _, _ = strings.Cut(parts, "\n## ")
	for _, p := range codePaths(parts) {
		if !exists(p) {
			t.Errorf("README's table of parts names %s, which does not exist", p)
		}
	}
}

// TestDocsNameOnlyPathsThatExist finds every internal/… and cmd/… path the
// docs (README, CONTRIBUTING, docs/**/*.md) and the package docs (every
// doc.go, and the package comment of any other Go file) mention, and fails for one that does not exist: a folder moved
// in a reorganisation leaves no stale reference behind.
//
// A path is a mention that starts at internal/ or cmd/ (or the module's
// import path): a path of another project carries its repository
// (fluxcd/source-controller/internal/index/digest.go), so it is not one.
// {a,b} is expanded, a trailing /... or Go identifier (.Render) dropped,
// and placeholders (<kind>) are not checked. Design notes describe history:
// in docs/design/ a path that no longer exists may stay on a line that
// says "former" or shows a move (→), and under a note's "## Alternatives",
// which describes what was not built.
func TestDocsNameOnlyPathsThatExist(t *testing.T) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case d.IsDir() && (rel == "tools" || rel == "bin" || d.Name() == "testdata" ||
			strings.HasPrefix(d.Name(), ".") && rel != "."):
			return filepath.SkipDir
		case d.IsDir():
			return nil
		case strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go"),
			strings.HasPrefix(rel, "docs/") && strings.HasSuffix(rel, ".md"),
			rel == "README.md", rel == "CONTRIBUTING.md":
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "docs/architecture.md") || !slices.Contains(files, "internal/layering/doc.go") {
		t.Fatalf("the walk missed the docs: %v", files)
	}
	for _, file := range files {
		design := strings.HasPrefix(file, "docs/design/")
		alternatives := false
		for i, line := range docLines(file, readFile(t, file)) {
			if strings.HasPrefix(line, "## ") {
				alternatives = line == "## Alternatives"
			}
			if design && (alternatives || strings.Contains(line, "former") || strings.Contains(line, "→")) {
				continue
			}
			for _, p := range mentionedPaths(line) {
				if !exists(p) {
					t.Errorf("%s:%d names %s, which does not exist", file, i+1, p)
				}
			}
		}
	}
}

// docLines is the text of a file that documents: all of a Markdown file or
// a doc.go, the package comment (the lines above the package clause) of
// any other Go file.
func docLines(file, text string) []string {
	lines := strings.Split(text, "\n")
	if !strings.HasSuffix(file, ".go") || filepath.Base(file) == "doc.go" {
		return lines
	}
	for i, line := range lines {
		if strings.HasPrefix(line, "package ") {
			return lines[:i]
		}
	}
	return nil
}

// layoutEntry is one line of the layout block with its continuations.
type layoutEntry struct {
	area        bool
	names       []string
	description string
}

func layoutBlock(t *testing.T, readme string) string {
	t.Helper()
	_, after, found := strings.Cut(readme, "## Layout\n")
	if !found {
		t.Fatal("README has no Layout section")
	}
	_, after, found = strings.Cut(after, "```\n")
	if !found {
		t.Fatal("README's Layout section has no code block")
	}
	block, _, found := strings.Cut(after, "```")
	if !found {
		t.Fatal("README's layout block is not closed")
	}
	return block
}

var twoSpaces = regexp.MustCompile(`  +`)

func parseLayout(block string) []layoutEntry {
	var out []layoutEntry
	inInternal := false
	for _, line := range strings.Split(block, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if indent > 2 && len(out) > 0 {
			out[len(out)-1].description += " " + strings.TrimSpace(line)
			continue
		}
		text := strings.TrimSpace(line)
		names, description := text, ""
		if loc := twoSpaces.FindStringIndex(text); loc != nil {
			names, description = text[:loc[0]], text[loc[1]:]
		}
		e := layoutEntry{area: indent == 2 && inInternal, names: strings.Fields(names), description: description}
		if indent == 0 {
			inInternal = e.names[0] == "internal/"
		}
		out = append(out, e)
	}
	return out
}

// packageWords returns the parts of a description that are one path-like
// word, braces expanded.
func packageWords(description string) []string {
	var out []string
	for _, part := range splitOutside(stripParens(description), ",;:") {
		part = strings.TrimSpace(part)
		if pathWord.MatchString(part) {
			out = append(out, expand(strings.TrimSuffix(part, "/"))...)
		}
	}
	return out
}

var pathWord = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*(/[a-z0-9_{},-]+)*/?$`)

// stripParens drops parenthesised text, nested or not.
func stripParens(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// splitOutside splits s at any of seps that is not inside braces.
func splitOutside(s, seps string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch {
		case r == '{':
			depth++
		case r == '}':
			depth--
		case depth == 0 && strings.ContainsRune(seps, r):
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// expand expands the first {a,b} group of p, recursively.
func expand(p string) []string {
	open := strings.Index(p, "{")
	end := strings.Index(p, "}")
	if open < 0 || end < open {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(p[open+1:end], ",") {
		out = append(out, expand(p[:open]+alt+p[end+1:])...)
	}
	return out
}

// codePaths returns the internal/… and cmd/… paths written in backquotes.
func codePaths(text string) []string {
	var out []string
	for _, m := range regexp.MustCompile("`((?:internal|cmd)/[^`]*)`").FindAllStringSubmatch(text, -1) {
		out = append(out, cleanPath(m[1])...)
	}
	return out
}

// mention is a path that starts at internal/ or cmd/, not inside another
// path or word.
var mention = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])(?:github\.com/weir-gitops/weir/)?((?:internal|cmd)/[A-Za-z0-9_./{},<>*-]*)`)

func mentionedPaths(line string) []string {
	var out []string
	for _, m := range mention.FindAllStringSubmatch(line, -1) {
		out = append(out, cleanPath(m[1])...)
	}
	return out
}

var goIdent = regexp.MustCompile(`\.[A-Z][A-Za-z0-9_]*$`)

// cleanPath expands braces and drops what names no file: a trailing
// /..., a Go identifier after the package, trailing punctuation.
// Placeholders (<kind>, *) yield nothing.
func cleanPath(raw string) []string {
	var out []string
	for _, p := range expand(raw) {
		p = strings.TrimRight(p, ".,")
		p = strings.TrimSuffix(p, "/...")
		p = goIdent.ReplaceAllString(p, "")
		p = strings.TrimRight(p, "/.,")
		if strings.ContainsAny(p, "<>*{}") {
			continue
		}
		out = append(out, p)
	}
	return out
}

func readFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(rel string) bool {
	_, err := os.Stat(filepath.Join(root, rel))
	return err == nil
}

func isDir(rel string) bool {
	fi, err := os.Stat(filepath.Join(root, rel))
	return err == nil && fi.IsDir()
}
