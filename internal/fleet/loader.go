package fleet

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

	"github.com/go-git/go-git/v5"
)

// loader holds what every cluster of one Load shares.
type loader struct {
	dir  string
	opts Options
	// urls are the normalized URLs meaning this repository.
	urls map[string]bool
	docs documents
	// roots are the root sync Kustomizations found in the repository, by
	// the entry point they build.
	roots map[string]rootSync
	// written are the Flux Kustomizations the files below the scanned
	// directories hold, as written (before any build), in walk order.
	written []written
	// tmp holds the trees of generated ExternalArtifacts ("" until one
	// is built), trees them by cluster and Key, labels the Key each
	// directory is written as in positions.
	tmp    string
	trees  map[string]tree
	labels map[string]string
}

// written is a Flux Kustomization as a file holds it.
type written struct {
	doc document
	// file is repository-relative.
	file string
}

// rootSync is a Kustomization that builds the tree holding its own file.
type rootSync struct {
	doc document
	Position
}

// newLoader reads the URLs meaning the repository: Options.SourceURLs and
// its Git remotes (a linked work tree's are its common directory's).
func newLoader(dir string, opts Options) *loader {
	l := &loader{dir: dir, opts: opts, urls: map[string]bool{}, trees: map[string]tree{}, labels: map[string]string{}}
	for _, u := range opts.SourceURLs {
		l.urls[normalizeURL(u)] = true
	}
	if repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: false, EnableDotGitCommonDir: true}); err == nil {
		if remotes, err := repo.Remotes(); err == nil {
			for _, r := range remotes {
				for _, u := range r.Config().URLs {
					l.urls[normalizeURL(u)] = true
				}
			}
		}
	}
	return l
}

// normalizeURL reduces a Git URL to host/path: scheme, user, port,
// a trailing .git and slashes dropped, scp-like syntax read as SSH, lower
// case.
func normalizeURL(u string) string {
	s := strings.ToLower(strings.TrimSpace(u))
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	} else if at := strings.Index(s, "@"); at >= 0 && strings.Contains(s[at:], ":") {
		s = strings.Replace(s, ":", "/", 1)
	}
	if at := strings.Index(s, "@"); at >= 0 && at < strings.Index(s+"/", "/") {
		s = s[at+1:]
	}
	host, rest, _ := strings.Cut(s, "/")
	if h, _, ok := strings.Cut(host, ":"); ok {
		host = h
	}
	rest = strings.TrimSuffix(strings.Trim(rest, "/"), ".git")
	return host + "/" + rest
}

// scanRoots walks the YAML files below dirs (repository-relative) for
// Flux Kustomizations (written) and among them root syncs: Kustomizations
// whose spec.path holds the file they are written in. A root sync lies
// inside the entry point it builds, so the directories Load is to look in
// or at are the only places to walk.
func (l *loader) scanRoots(dirs []string) error {
	l.roots = map[string]rootSync{}
	dirs = slices.Sorted(slices.Values(dirs))
	for i, dir := range dirs {
		if i > 0 && slices.ContainsFunc(dirs[:i], func(d string) bool { return within(dir, d) }) {
			continue // walked already
		}
		if err := l.scanRootsIn(dir); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) scanRootsIn(dir string) error {
	return filepath.WalkDir(l.abs(dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := path.Ext(d.Name()); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		if data, err := os.ReadFile(p); err != nil || !bytes.Contains(data, []byte(kustomizeGroup)) {
			return nil //nolint:nilerr // an unreadable file holds no root sync; the build reports it
		}
		rel, _ := filepath.Rel(l.dir, p)
		rel = filepath.ToSlash(rel)
		for _, doc := range l.docs.of(p) {
			if doc.kind != "Kustomization" || !strings.HasPrefix(doc.apiVersion, kustomizeGroup+"/") {
				continue
			}
			l.written = append(l.written, written{doc: doc, file: rel})
			spec := field(doc.node, "spec")
			entry := cleanRel(scalar(spec, "path"))
			if entry == "." && scalar(field(spec, "sourceRef"), "name") != implicitName {
				// path ./ is a whole other repository far more often
				// than a root sync of this one.
				continue
			}
			if within(path.Dir(rel), entry) {
				if _, ok := l.roots[entry]; !ok {
					l.roots[entry] = rootSync{doc: doc, Position: Position{File: rel, Line: doc.line}}
				}
			}
		}
		return nil
	})
}

// cleanRel cleans a repository-relative path: "./clusters/dev/" is
// "clusters/dev", "" and "./" are ".".
func cleanRel(p string) string {
	return path.Clean(strings.TrimPrefix(filepath.ToSlash(p), "/"))
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}

// findEntries returns the entry points inside scope: the directories root
// syncs build, and every directory directly under scope's clusters/
// directory, or under scope itself when it is a clusters/ directory.
// When there is none, scope is the entry point, unless it is the whole
// repository: a path of ./ is a root sync far less often than a mistake.
func (l *loader) findEntries(scope string) ([]string, error) {
	var entries []string
	for e := range l.roots {
		if within(e, scope) {
			entries = append(entries, e)
		}
	}
	parents := []string{path.Join(scope, "clusters")}
	if scope != "." && path.Base(scope) == "clusters" {
		parents = append(parents, scope)
	}
	for _, parent := range parents {
		des, err := os.ReadDir(l.abs(parent))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading %s: %w", parent, err)
		}
		for _, de := range des {
			rel := path.Join(parent, de.Name())
			if isDir(l.abs(rel)) && !slices.Contains(entries, rel) && !l.insideRoot(rel) {
				entries = append(entries, rel)
			}
		}
	}
	slices.Sort(entries)
	if len(entries) == 0 && scope != "." {
		return []string{scope}, nil
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("no entry point in %s: no Kustomization syncs the directory holding it and there is no clusters/ directory; name one with --path", l.dir)
	}
	return entries, nil
}

// confine refuses a directory (repository-relative) that leads out of the
// repository, by climbing out with ".." or through a symlink, as
// kustomize.Build refuses such a spec.path.
func (l *loader) confine(rel string) error {
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return fmt.Errorf("entry point %s: outside the repository", rel)
	}
	resolved, err := filepath.EvalSymlinks(l.abs(rel))
	if err != nil || !isDir(resolved) {
		return fmt.Errorf("entry point %s: not a directory", rel)
	}
	root, err := filepath.EvalSymlinks(l.dir)
	if err != nil {
		return fmt.Errorf("repository %s: %w", l.dir, err)
	}
	if r, err := filepath.Rel(root, resolved); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return fmt.Errorf("entry point %s: a symlink out of the repository", rel)
	}
	return nil
}

// insideRoot reports whether dir lies inside the tree of a root sync.
func (l *loader) insideRoot(dir string) bool {
	for e := range l.roots {
		if e != dir && within(dir, e) {
			return true
		}
	}
	return false
}
