package chart

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/ignore"
)

// ErrPathEscape marks a path, link or dependency that leaves the source
// root.
var ErrPathEscape = errors.New("path escapes the source root")

// maxLinkDepth bounds how many linked directories a walk may pass
// through, so that link cycles end.
const maxLinkDepth = 32

// SecurePath resolves rel, a slash-separated path from the spec, inside
// root: it must be relative, must not climb out with "..", and every link
// on the way must resolve inside root. It returns the resolved path on
// disk.
func SecurePath(root, rel string) (string, error) {
	clean := path.Clean(filepath.ToSlash(rel))
	if path.IsAbs(clean) || filepath.IsAbs(rel) || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("path '%s': %w", rel, ErrPathEscape)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("resolving source root: %w", err)
	}
	p, err := filepath.EvalSymlinks(filepath.Join(realRoot, filepath.FromSlash(clean)))
	if err != nil {
		return "", fmt.Errorf("path '%s': %w", rel, withoutRoot(err, realRoot))
	}
	if !within(realRoot, p) {
		return "", fmt.Errorf("path '%s' resolves to a location outside the source: %w", rel, ErrPathEscape)
	}
	return p, nil
}

// within reports whether p is root or below it; both are resolved paths.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// withoutRoot keeps temporary directories out of messages.
func withoutRoot(err error, root string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", strings.TrimPrefix(strings.TrimPrefix(pe.Path, root), "/"), pe.Err)
	}
	return err
}

// LoadDir loads the chart directory rel inside root as Helm's directory
// loader does (.helmignore honoured, files in lexical order), except that
// links are followed only when they resolve inside root, link cycles fail,
// and every file is bounded by the file limit.
func LoadDir(root, rel string, l Limits) (*chartv2.Chart, error) {
	dir, err := SecurePath(root, rel)
	if err != nil {
		return nil, err
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	rules, err := ignoreRules(dir)
	if err != nil {
		return nil, err
	}
	w := &dirWalker{root: realRoot, rules: rules, max: l.fileSize()}
	if err := w.walk(dir, "", []string{dir}); err != nil {
		return nil, fmt.Errorf("failed to load chart from '%s': %w", rel, err)
	}
	ch, err := loader.LoadFiles(w.files)
	if err != nil {
		return nil, fmt.Errorf("failed to load chart from '%s': %w", rel, err)
	}
	return ch, nil
}

func ignoreRules(dir string) (*ignore.Rules, error) {
	rules := ignore.Empty()
	f := filepath.Join(dir, ignore.HelmIgnore)
	if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
		if rules, err = ignore.ParseFile(f); err != nil {
			return nil, fmt.Errorf("parsing %s: %w", ignore.HelmIgnore, err)
		}
	}
	rules.AddDefaults()
	return rules, nil
}

// dirWalker collects a chart directory's files.
type dirWalker struct {
	root  string
	rules *ignore.Rules
	max   int64
	files []*archive.BufferedFile
}

// walk visits dir, whose chart-relative name is name; stack holds the
// resolved directories above it, to catch link cycles.
func (w *dirWalker) walk(dir, name string, stack []string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return withoutRoot(err, w.root)
	}
	for _, e := range entries {
		n := path.Join(name, e.Name())
		if err := w.visit(filepath.Join(dir, e.Name()), n, stack); err != nil {
			return err
		}
	}
	return nil
}

func (w *dirWalker) visit(p, name string, stack []string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return withoutRoot(err, w.root)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if p, fi, err = w.follow(p, name); err != nil {
			return err
		}
	}
	if w.rules.Ignore(name, fi) {
		return nil
	}
	switch {
	case fi.IsDir():
		if slices.Contains(stack, p) || len(stack) > maxLinkDepth {
			return fmt.Errorf("link cycle at '%s'", name)
		}
		return w.walk(p, name, append(stack, p))
	case !fi.Mode().IsRegular():
		return fmt.Errorf("cannot load irregular file %s as it has file mode type bits set", name)
	case w.max >= 0 && fi.Size() > w.max:
		return fileTooLarge(name, fi.Size(), w.max)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return withoutRoot(err, w.root)
	}
	w.files = append(w.files, &archive.BufferedFile{Name: name, ModTime: fi.ModTime(), Data: trimBOM(data)})
	return nil
}

// follow resolves the link at p, which must land inside the root.
func (w *dirWalker) follow(p, name string) (string, fs.FileInfo, error) {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", nil, fmt.Errorf("link '%s': %w", name, withoutRoot(err, w.root))
	}
	if !within(w.root, target) {
		return "", nil, fmt.Errorf("link '%s' resolves to a location outside the source: %w", name, ErrPathEscape)
	}
	fi, err := os.Stat(target)
	if err != nil {
		return "", nil, withoutRoot(err, w.root)
	}
	return target, fi, nil
}

func trimBOM(b []byte) []byte { return bytes.TrimPrefix(b, []byte{0xEF, 0xBB, 0xBF}) }
