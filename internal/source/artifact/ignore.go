package artifact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// SourceIgnoreFile is the name of the per-directory ignore file.
const SourceIgnoreFile = ".sourceignore"

// maxIgnoreFileSize bounds one .sourceignore file or spec.ignore value:
// rules are matched against every path, so their number is CPU time.
const maxIgnoreFileSize = 1 << 20

// vcsRules are always applied, whatever else is configured.
var vcsRules = []string{".git/", ".gitignore", ".gitmodules", ".gitattributes"}

// defaultRules apply only while no .sourceignore rule and no spec.ignore
// rule exists (see doc.go for why).
var defaultRules = []string{
	"*.jpg", "*.jpeg", "*.gif", "*.png", "*.wmv", "*.flv", "*.tar.gz", "*.zip",
	".github/", ".circleci/", ".travis.yml", ".gitlab-ci.yml", "appveyor.yml", ".drone.yml",
	"cloudbuild.yaml", "codeship-services.yml", "codeship-steps.yml",
	"**/.goreleaser.yml", "**/.sops.yaml", "**/.flux.yaml",
}

// Filter decides which paths an archive leaves out.
type Filter interface {
	// Exclude reports whether the slash-separated path, relative to the
	// archive root, is left out. isDir describes what the path names, or for
	// a followed symbolic link, its target.
	Exclude(path string, isDir bool) bool
}

// FilterFunc adapts a function to Filter.
type FilterFunc func(path string, isDir bool) bool

// Exclude calls f.
func (f FilterFunc) Exclude(path string, isDir bool) bool { return f(path, isDir) }

// dirPruner is implemented by filters whose exclusion of a directory implies
// the exclusion of everything beneath it, letting Archive skip the walk.
type dirPruner interface {
	prunesExcludedDirs() bool
}

// IgnoreRules is one source of rules in gitignore syntax.
type IgnoreRules struct {
	// Dir is the slash-separated directory, relative to the archive root,
	// whose contents the rules apply to; "" for the root.
	Dir string
	// Text holds the rules, one a line; "#" starts a comment line and "!"
	// re-includes.
	Text string
}

// IgnoreFilter applies gitignore-syntax rules the way Flux's
// source-controller does; see doc.go for the precedence.
type IgnoreFilter struct {
	matcher    gitignore.Matcher
	reincludes bool
}

// NewFilterFromRules builds a filter from rule sources given lowest
// priority first; later sources override earlier ones. When the sources hold
// no rule at all, Flux's default exclusions apply; the VCS exclusions
// (.git/, .gitignore, .gitmodules, .gitattributes) always apply.
func NewFilterFromRules(sources ...IgnoreRules) *IgnoreFilter {
	var custom []gitignore.Pattern
	reincludes := false
	for _, src := range sources {
		domain := splitDomain(src.Dir)
		for _, line := range ruleLines(src.Text) {
			reincludes = reincludes || strings.HasPrefix(line, "!")
			custom = append(custom, gitignore.ParsePattern(line, domain))
		}
	}
	var ps []gitignore.Pattern
	for _, r := range vcsRules {
		ps = append(ps, gitignore.ParsePattern(r, nil))
	}
	if len(custom) == 0 {
		for _, r := range defaultRules {
			ps = append(ps, gitignore.ParsePattern(r, nil))
		}
	}
	ps = append(ps, custom...)
	return &IgnoreFilter{matcher: gitignore.NewMatcher(ps), reincludes: reincludes}
}

// NewFilter builds the filter a GitRepository or OCIRepository archive uses:
// every .sourceignore file in the tree at root (parents before children,
// each applying to its own directory and below), then specIgnore, which
// applies from the root and has the last word. Directories named .git are
// not searched; in-root directory links are, like Archive walks them.
func NewFilter(root string, specIgnore *string) (*IgnoreFilter, error) {
	top, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("opening the directory to archive: %w", withoutPath(err))
	}
	defer top.Close()

	var sources []IgnoreRules
	readRules := func(dir string) error {
		text, err := readIgnoreFile(top, joinLogical(dir, SourceIgnoreFile))
		if err != nil {
			return fmt.Errorf("reading %s: %w", joinLogical(dir, SourceIgnoreFile), err)
		}
		if text != "" {
			sources = append(sources, IgnoreRules{Dir: dir, Text: text})
		}
		return nil
	}
	if err := readRules(""); err != nil {
		return nil, err
	}
	w := &treeWalker{top: top, maxEntries: maxTreeEntries}
	err = w.walk(context.Background(), func(n *treeNode) (bool, error) {
		if !n.IsDir || n.Name == ".git" {
			return false, nil
		}
		return true, readRules(n.Path)
	})
	if err != nil {
		return nil, fmt.Errorf("loading %s files: %w", SourceIgnoreFile, err)
	}
	if specIgnore != nil {
		if len(*specIgnore) > maxIgnoreFileSize {
			return nil, fmt.Errorf("spec.ignore is longer than %d bytes", maxIgnoreFileSize)
		}
		sources = append(sources, IgnoreRules{Text: *specIgnore})
	}
	return NewFilterFromRules(sources...), nil
}

// Exclude implements Filter.
func (f *IgnoreFilter) Exclude(p string, isDir bool) bool {
	if f == nil || p == "" || p == "." {
		return false
	}
	return f.matcher.Match(strings.Split(p, "/"), isDir)
}

// prunesExcludedDirs: without "!" rules, a pattern that matches a directory
// matches everything beneath it too (the go-git matcher compares prefixes),
// so nothing under an excluded directory can come back.
func (f *IgnoreFilter) prunesExcludedDirs() bool { return f != nil && !f.reincludes }

// readIgnoreFile reads the ignore file at name through top, so one that is
// a link leading out of the tree is never read; "" when absent.
func readIgnoreFile(top *os.Root, name string) (string, error) {
	f, err := top.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		if fi, lerr := top.Lstat(name); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", nil // a link that escapes or dangles: skipped like Archive skips it
		}
		return "", err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxIgnoreFileSize+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxIgnoreFileSize {
		return "", fmt.Errorf("larger than %d bytes", maxIgnoreFileSize)
	}
	return string(b), nil
}

// ruleLines splits rule text into pattern lines, dropping blank lines,
// comments, and the \r of CRLF files.
func ruleLines(text string) []string {
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		lines = append(lines, line)
	}
	return lines
}

func splitDomain(dir string) []string {
	dir = strings.Trim(dir, "/")
	if dir == "" || dir == "." {
		return nil
	}
	return strings.Split(dir, "/")
}
