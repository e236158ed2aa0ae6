package git

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// writeTree materialises commit c's tree under root, limited to the sparse
// directories when any are given (cleaned, each with a trailing slash).
//
// go-git's Worktree.Checkout would do this too, but it builds an index and
// validates every path with several lstat/EvalSymlinks calls through the
// bound filesystem: on a 5,000-file tree that was 90% of a clone. Here the
// kernel confines every write to root (os.Root resolves paths beneath it
// and refuses to follow a symlink out of it), the directory is fresh, and
// tree paths are unique, so no file can be written through a symlink the
// tree itself created. Paths git would refuse (".", "..", ".git" in any
// case, backslashes) are refused here too. Symlinks are written as
// symlinks whatever their target; the archiver decides about them.
// Submodule entries become empty directories.
func writeTree(root *os.Root, objects storer.EncodedObjectStorer, c *object.Commit, sparse []string) error {
	tree, err := c.Tree()
	if err != nil {
		return fmt.Errorf("read tree of %s: %w", c.Hash, err)
	}
	if err := checkSparseDirs(tree, sparse, c); err != nil {
		return err
	}
	w := treeWriter{root: root, objects: objects, dirs: map[string]bool{"": true}}
	defer w.closeDir()
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		name, entry, err := walker.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("walk tree of %s: %w", c.Hash, err)
		}
		if err := validTreePath(name); err != nil {
			return err
		}
		if entry.Mode == filemode.Dir || !inSparse(name, sparse) {
			continue
		}
		if err := w.write(name, entry); err != nil {
			return err
		}
	}
}

type treeWriter struct {
	root    *os.Root
	objects storer.EncodedObjectStorer
	dirs    map[string]bool // directories known to exist
	// dir is the directory the last file went into, opened as a root of
	// its own: files of one directory mostly come in a row, and creating
	// them relative to it costs one openat instead of one per path
	// component.
	dir     string
	dirRoot *os.Root
}

// parent returns the root to create name's base name in.
func (w *treeWriter) parent(name string) (*os.Root, string, error) {
	dir, base := path.Split(name)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		return w.root, base, nil
	}
	if w.dirRoot == nil || w.dir != dir {
		w.closeDir()
		r, err := w.root.OpenRoot(dir)
		if err != nil {
			return nil, "", fmt.Errorf("open directory %s: %w", dir, err)
		}
		w.dir, w.dirRoot = dir, r
	}
	return w.dirRoot, base, nil
}

func (w *treeWriter) closeDir() {
	if w.dirRoot != nil {
		_ = w.dirRoot.Close()
		w.dirRoot = nil
	}
}

func (w *treeWriter) write(name string, entry object.TreeEntry) error {
	if err := w.mkdirAll(path.Dir(name)); err != nil {
		return err
	}
	switch entry.Mode {
	case filemode.Regular, filemode.Deprecated, filemode.Executable:
		perm := os.FileMode(0o644)
		if entry.Mode == filemode.Executable {
			perm = 0o755
		}
		return w.writeBlob(name, entry, perm)
	case filemode.Symlink:
		target, err := readBlob(w.objects, entry)
		if err != nil {
			return err
		}
		if err := w.root.Symlink(string(target), name); err != nil {
			return fmt.Errorf("create symlink %s: %w", name, err)
		}
		return nil
	case filemode.Submodule:
		return w.mkdirAll(name)
	default:
		return fmt.Errorf("%s has unsupported file mode %s", name, entry.Mode)
	}
}

func (w *treeWriter) writeBlob(name string, entry object.TreeEntry, perm os.FileMode) error {
	blob, err := object.GetBlob(w.objects, entry.Hash)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	r, err := blob.Reader()
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	defer r.Close()
	parent, base, err := w.parent(name)
	if err != nil {
		return err
	}
	f, err := parent.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	if _, err := io.Copy(f, r); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

func (w *treeWriter) mkdirAll(dir string) error {
	if dir == "." || w.dirs[dir] {
		return nil
	}
	if err := w.root.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	for d := dir; d != "." && !w.dirs[d]; d = path.Dir(d) {
		w.dirs[d] = true
	}
	return nil
}

func readBlob(objects storer.EncodedObjectStorer, entry object.TreeEntry) ([]byte, error) {
	blob, err := object.GetBlob(objects, entry.Hash)
	if err != nil {
		return nil, err
	}
	r, err := blob.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// validTreePath refuses the paths git's verify_path refuses on any
// platform weir runs on.
func validTreePath(name string) error {
	for _, part := range strings.Split(name, "/") {
		switch {
		case part == "", part == ".", part == "..", strings.EqualFold(part, ".git"),
			strings.ContainsAny(part, "\\\x00"):
			return fmt.Errorf("repository tree contains the unsafe path %q", name)
		}
	}
	return nil
}

// checkSparseDirs makes sure every sparse directory is a directory of tree.
func checkSparseDirs(tree *object.Tree, sparse []string, c *object.Commit) error {
	for _, d := range sparse {
		dir := strings.TrimSuffix(d, "/")
		e, err := tree.FindEntry(dir)
		if err != nil || e.Mode != filemode.Dir {
			return fmt.Errorf("%w: sparse checkout directory %q at %s", ErrPathNotFound, dir, c.Hash)
		}
	}
	return nil
}

// inSparse reports whether p (a file path) is inside one of the sparse
// directories; everything is when there are none.
func inSparse(p string, sparse []string) bool {
	if len(sparse) == 0 {
		return true
	}
	for _, d := range sparse {
		if strings.HasPrefix(p, d) {
			return true
		}
	}
	return false
}
