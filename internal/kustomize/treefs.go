package kustomize

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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

// onDisk names abs in place of name in an error of the tree, whose
// operations and errnos are those of the os package (artifact.Tree), so
// that it reads as the same operation on disk would.
func onDisk(err error, op, abs string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if op == "" {
			op = pe.Op
		}
		return &fs.PathError{Op: op, Path: abs, Err: pe.Err}
	}
	return err
}

func (c *confinedFS) stat(abs string) (fs.FileInfo, error) {
	return c.statOp("stat", abs, os.Stat)
}

func (c *confinedFS) lstat(abs string) (fs.FileInfo, error) {
	return c.statOp("lstat", abs, os.Lstat)
}

func (c *confinedFS) statOp(op, abs string, disk func(string) (fs.FileInfo, error)) (fs.FileInfo, error) {
	name, ok := c.treeName(abs)
	if !ok {
		return disk(abs)
	}
	info, err := fs.Stat(c.tree, name)
	return info, onDisk(err, op, abs)
}

func (c *confinedFS) readFile(abs string) ([]byte, error) {
	name, ok := c.treeName(abs)
	if !ok {
		return os.ReadFile(abs)
	}
	data, err := fs.ReadFile(c.tree, name)
	return data, onDisk(err, "", abs)
}

func (c *confinedFS) readDir(abs string) ([]fs.DirEntry, error) {
	name, ok := c.treeName(abs)
	if !ok {
		return os.ReadDir(abs)
	}
	entries, err := fs.ReadDir(c.tree, name)
	return entries, onDisk(err, "", abs)
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
