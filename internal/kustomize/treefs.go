package kustomize

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// memoryRoot is where a build from an in-memory tree (BuildOptions.Tree)
// sees its source: an absolute path, so that kustomize's loader works as
// on disk, that is never looked up on disk. Messages name paths relative to
// it, as they name paths relative to a directory.
const memoryRoot = "/weir-source"

// The file operations below serve the paths of the tree from it, every
// other path (the root on disk, kustomize's clones of remote bases) from
// the disk, and give the errors the os package gives for the same path
// with the same operation, so that a build's messages do not depend on
// where its source lies.

// treeName returns the name in the tree of abs, a clean absolute path,
// when the tree serves it.
func (c *confinedFS) treeName(abs string) (string, bool) {
	if c.tree == nil {
		return "", false
	}
	if abs == c.root {
		return ".", true
	}
	if rest, ok := strings.CutPrefix(abs, c.root+string(filepath.Separator)); ok {
		return filepath.ToSlash(rest), true
	}
	return "", false
}

// treeError is the error os gives for op on abs, which is not in the
// tree: "not a directory" when a file stands in the way.
func (c *confinedFS) treeError(op, abs, name string) error {
	err := error(syscall.ENOENT)
	for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
		if info, serr := fs.Stat(c.tree, dir); serr == nil {
			if !info.IsDir() {
				err = syscall.ENOTDIR
			}
			break
		}
	}
	return &fs.PathError{Op: op, Path: abs, Err: err}
}

func (c *confinedFS) stat(abs string) (fs.FileInfo, error) {
	return c.statOp("stat", abs, os.Stat)
}

func (c *confinedFS) lstat(abs string) (fs.FileInfo, error) {
	return c.statOp("lstat", abs, os.Lstat)
}

func (c *confinedFS) statOp(op, abs string, onDisk func(string) (fs.FileInfo, error)) (fs.FileInfo, error) {
	name, ok := c.treeName(abs)
	if !ok {
		return onDisk(abs)
	}
	info, err := fs.Stat(c.tree, name)
	if err != nil {
		return nil, c.treeError(op, abs, name)
	}
	return info, nil
}

func (c *confinedFS) readFile(abs string) ([]byte, error) {
	name, ok := c.treeName(abs)
	if !ok {
		return os.ReadFile(abs)
	}
	info, err := fs.Stat(c.tree, name)
	switch {
	case err != nil:
		return nil, c.treeError("open", abs, name)
	case info.IsDir():
		return nil, &fs.PathError{Op: "read", Path: abs, Err: syscall.EISDIR}
	}
	return fs.ReadFile(c.tree, name)
}

func (c *confinedFS) readDir(abs string) ([]fs.DirEntry, error) {
	name, ok := c.treeName(abs)
	if !ok {
		return os.ReadDir(abs)
	}
	info, err := fs.Stat(c.tree, name)
	switch {
	case err != nil:
		return nil, c.treeError("open", abs, name)
	case !info.IsDir():
		return nil, &fs.PathError{Op: "open", Path: abs, Err: syscall.ENOTDIR}
	}
	return fs.ReadDir(c.tree, name)
}

// glob is filepath.Glob, over the tree for patterns inside it.
func (c *confinedFS) glob(pattern string) ([]string, error) {
	name, ok := c.treeName(pattern)
	if !ok {
		return filepath.Glob(pattern)
	}
	matches, err := fs.Glob(c.tree, name)
	if err != nil {
		return nil, filepath.ErrBadPattern
	}
	for i, m := range matches {
		matches[i] = filepath.Join(c.root, filepath.FromSlash(m))
	}
	return matches, nil
}

// walk is filepath.Walk, over the tree for roots inside it: lexical
// order, SkipDir and SkipAll as filepath.Walk takes them.
func (c *confinedFS) walk(root string, fn filepath.WalkFunc) error {
	if _, ok := c.treeName(root); !ok {
		return filepath.Walk(root, fn)
	}
	info, err := c.lstat(root)
	if err != nil {
		err = fn(root, nil, err)
	} else {
		err = c.walkTree(root, info, fn)
	}
	if errors.Is(err, filepath.SkipDir) || errors.Is(err, filepath.SkipAll) {
		return nil
	}
	return err
}

func (c *confinedFS) walkTree(p string, info fs.FileInfo, fn filepath.WalkFunc) error {
	if !info.IsDir() {
		return fn(p, info, nil)
	}
	entries, err := c.readDir(p)
	if err := fn(p, info, err); err != nil || len(entries) == 0 {
		return err
	}
	for _, e := range entries {
		child := filepath.Join(p, e.Name())
		childInfo, err := e.Info()
		if err != nil {
			return err
		}
		if err := c.walkTree(child, childInfo, fn); err != nil {
			if !childInfo.IsDir() || !errors.Is(err, filepath.SkipDir) {
				return err
			}
		}
	}
	return nil
}
