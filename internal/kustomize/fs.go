package kustomize

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// confinedFS is the only window kustomize gets onto the disk. It serves the
// files below root, read-only, and refuses every path that leaves root,
// lexically ("..", absolute paths) or through a symlink. Refusals are
// remembered, because kustomize often turns a filesystem error into a vaguer
// one of its own ("not a valid directory"); Build reports the refusal instead.
//
// Two more duties ride on it: it serves in-memory overrides (the kustomization
// file Build merged with the Kustomization spec, so the source tree is never
// written) and it logs every regular file read, which FindSOPSEncrypted uses.
//
// One instance serves one build; nothing in it is shared between builds.
type confinedFS struct {
	root string // absolute, free of symlinks

	// tree, when set, holds the files below root (memoryRoot): nothing
	// there is read from disk. It has no symlinks, so paths in it are
	// resolved lexically.
	tree fs.FS

	// cloneDirPrefix, when set, also admits kustomize's own clones of
	// remote bases (os.TempDir()/kustomize-*). Empty when remote bases are
	// disabled.
	cloneDirPrefix string

	overlay map[string][]byte // absolute path → content; read-only after construction

	mu        sync.Mutex
	reads     map[string]struct{} // root-relative, slash-separated
	violation error               // first refusal
}

var _ filesys.FileSystem = (*confinedFS)(nil)

// newConfinedFS confines to root, which must be an existing directory, or
// to tree when it is set.
func newConfinedFS(root string, tree fs.FS, allowRemoteClones bool) (*confinedFS, error) {
	resolved, err := sourceRoot(root, tree)
	if err != nil {
		return nil, err
	}
	cfs := &confinedFS{
		root:    resolved,
		tree:    tree,
		overlay: map[string][]byte{},
		reads:   map[string]struct{}{},
	}
	if allowRemoteClones {
		tmp, err := filepath.EvalSymlinks(os.TempDir())
		if err == nil {
			cfs.cloneDirPrefix = filepath.Join(tmp, "kustomize-")
		}
	}
	return cfs, nil
}

// sourceRoot checks the root of a build and returns its absolute,
// symlink-free path: memoryRoot for a tree.
func sourceRoot(root string, tree fs.FS) (string, error) {
	if tree != nil {
		info, err := fs.Stat(tree, ".")
		if err != nil {
			return "", fmt.Errorf("source root: %w", err)
		}
		if !info.IsDir() {
			return "", errors.New("source root is not a directory")
		}
		return memoryRoot, nil
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("source root: %w", err)
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("source root: %w", err)
	}
	info, err := os.Stat(resolved)
	if err != nil {
		return "", fmt.Errorf("source root: %w", err)
	}
	if !info.IsDir() {
		return "", errors.New("source root is not a directory")
	}
	return resolved, nil
}

// setOverlay makes path (absolute, inside root) read as data.
func (c *confinedFS) setOverlay(path string, data []byte) {
	c.overlay[filepath.Clean(path)] = data
}

// rel renders an absolute path relative to root, for messages; paths
// outside root keep their leading "..".
func (c *confinedFS) rel(abs string) string {
	r, err := filepath.Rel(c.root, abs)
	if err != nil {
		return abs
	}
	return filepath.ToSlash(r)
}

func (c *confinedFS) inside(abs string) bool {
	if abs == c.root || strings.HasPrefix(abs, c.root+string(filepath.Separator)) {
		return true
	}
	return c.cloneDirPrefix != "" && strings.HasPrefix(abs, c.cloneDirPrefix)
}

func (c *confinedFS) refuse(err error) error {
	c.mu.Lock()
	if c.violation == nil {
		c.violation = err
	}
	c.mu.Unlock()
	return err
}

// firstViolation returns the first refused access, if any.
func (c *confinedFS) firstViolation() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.violation
}

// resolve turns path into an absolute, symlink-free path inside root, or
// refuses it. Relative paths are taken relative to root. A path that does
// not exist yet is resolved through its deepest existing parent, so a
// symlinked parent directory cannot smuggle it out.
func (c *confinedFS) resolve(path string) (string, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(c.root, path)
	}
	abs := filepath.Clean(path)
	if _, ok := c.overlay[abs]; ok {
		return abs, nil
	}
	if !c.inside(abs) {
		return "", c.refuse(&UnsafePathError{Path: c.rel(abs), Reason: "it is outside the source root"})
	}
	if _, ok := c.treeName(abs); ok {
		return abs, nil
	}
	resolved, err := evalExisting(abs)
	if err != nil {
		return "", err
	}
	if !c.inside(resolved) {
		return "", c.refuse(&UnsafePathError{Path: c.rel(abs), Reason: "a symlink resolves outside the source root"})
	}
	return resolved, nil
}

// evalExisting resolves the symlinks of the longest existing prefix of abs
// and appends the rest unchanged. A dangling symlink is judged by where it
// points.
func evalExisting(abs string) (string, error) {
	return evalExistingDepth(abs, 0)
}

const maxSymlinkHops = 64

func evalExistingDepth(abs string, hops int) (string, error) {
	if hops > maxSymlinkHops {
		return "", fmt.Errorf("too many levels of symbolic links: %s", filepath.Base(abs))
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		return resolved, nil
	}
	dir, base := filepath.Split(abs)
	dir = filepath.Clean(dir)
	if dir == abs || base == "" {
		return abs, nil
	}
	parent, err := evalExistingDepth(dir, hops+1)
	if err != nil {
		return "", err
	}
	leaf := filepath.Join(parent, base)
	if target, err := os.Readlink(leaf); err == nil {
		if !filepath.IsAbs(target) {
			target = filepath.Join(parent, target)
		}
		return evalExistingDepth(filepath.Clean(target), hops+1)
	}
	return leaf, nil
}

func (c *confinedFS) logRead(resolved string) {
	if resolved != c.root && !strings.HasPrefix(resolved, c.root+string(filepath.Separator)) {
		return // a remote clone, not part of the source
	}
	c.mu.Lock()
	c.reads[c.rel(resolved)] = struct{}{}
	c.mu.Unlock()
}

// readFiles lists the source files read so far, sorted.
func (c *confinedFS) readFiles() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.reads))
	for p := range c.reads {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

var errReadOnly = errors.New("the source filesystem is read-only")

func (c *confinedFS) Create(string) (filesys.File, error) { return nil, errReadOnly }
func (c *confinedFS) Mkdir(string) error                  { return errReadOnly }
func (c *confinedFS) MkdirAll(string) error               { return errReadOnly }
func (c *confinedFS) WriteFile(string, []byte) error      { return errReadOnly }

// RemoveAll only cleans up kustomize's clones of remote bases.
func (c *confinedFS) RemoveAll(path string) error {
	abs := filepath.Clean(path)
	if c.cloneDirPrefix != "" && strings.HasPrefix(abs, c.cloneDirPrefix) {
		return os.RemoveAll(abs)
	}
	return errReadOnly
}

func (c *confinedFS) Open(path string) (filesys.File, error) {
	data, err := c.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return &memFile{name: filepath.Base(path), Reader: bytes.NewReader(data)}, nil
}

func (c *confinedFS) ReadFile(path string) ([]byte, error) {
	resolved, err := c.resolve(path)
	if err != nil {
		return nil, err
	}
	if data, ok := c.overlay[resolved]; ok {
		return slices.Clone(data), nil
	}
	data, err := c.readFile(resolved)
	if err != nil {
		return nil, err
	}
	c.logRead(resolved)
	return data, nil
}

func (c *confinedFS) Exists(path string) bool {
	resolved, err := c.resolve(path)
	if err != nil {
		return false
	}
	if _, ok := c.overlay[resolved]; ok {
		return true
	}
	_, err = c.stat(resolved)
	return err == nil
}

func (c *confinedFS) IsDir(path string) bool {
	resolved, err := c.resolve(path)
	if err != nil {
		return false
	}
	info, err := c.stat(resolved)
	return err == nil && info.IsDir()
}

func (c *confinedFS) ReadDir(path string) ([]string, error) {
	resolved, err := c.resolve(path)
	if err != nil {
		return nil, err
	}
	entries, err := c.readDir(resolved)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	for p := range c.overlay {
		if filepath.Dir(p) == resolved && !slices.Contains(names, filepath.Base(p)) {
			names = append(names, filepath.Base(p))
		}
	}
	sort.Strings(names)
	return names, nil
}

// CleanedAbs follows the contract of kyaml's on-disk filesystem: the
// directory itself, or the parent directory and the file name.
func (c *confinedFS) CleanedAbs(path string) (filesys.ConfirmedDir, string, error) {
	resolved, err := c.resolve(path)
	if err != nil {
		return "", "", err
	}
	if _, ok := c.overlay[resolved]; ok {
		return filesys.ConfirmedDir(filepath.Dir(resolved)), filepath.Base(resolved), nil
	}
	info, err := c.stat(resolved)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", c.rel(resolved), fs.ErrNotExist)
	}
	if info.IsDir() {
		return filesys.ConfirmedDir(resolved), "", nil
	}
	return filesys.ConfirmedDir(filepath.Dir(resolved)), filepath.Base(resolved), nil
}

func (c *confinedFS) Glob(pattern string) ([]string, error) {
	if !filepath.IsAbs(pattern) {
		pattern = filepath.Join(c.root, pattern)
	}
	matches, err := c.glob(filepath.Clean(pattern))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		if _, err := c.resolve(m); err == nil {
			out = append(out, m)
		}
	}
	if !filesys.IsHiddenFilePath(pattern) {
		out = filesys.RemoveHiddenFiles(out)
	}
	return out, nil
}

// Walk walks the real tree below path. filepath.Walk does not follow
// symlinks, and every file read goes through ReadFile again.
func (c *confinedFS) Walk(path string, walkFn filepath.WalkFunc) error {
	resolved, err := c.resolve(path)
	if err != nil {
		return err
	}
	return c.walk(resolved, walkFn)
}

// memFile is a read-only filesys.File over bytes.
type memFile struct {
	name string
	*bytes.Reader
}

func (f *memFile) Write([]byte) (int, error) { return 0, errReadOnly }
func (f *memFile) Close() error              { return nil }
func (f *memFile) Stat() (os.FileInfo, error) {
	return memInfo{name: f.name, size: f.Size()}, nil
}

type memInfo struct {
	name string
	size int64
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return 0o444 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
