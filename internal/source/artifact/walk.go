package artifact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
)

// SymlinkPolicy says what happens to symbolic links in a tree being
// archived.
type SymlinkPolicy int

const (
	// FollowSymlinksInRoot archives a link whose target resolves inside the
	// root as a copy of that target: a regular file, or a directory walked
	// recursively. Links that are absolute, that resolve outside the root at
	// any step, that dangle, loop, or lead back into one of their own
	// ancestors are skipped and reported. This is the default.
	FollowSymlinksInRoot SymlinkPolicy = iota
	// SkipSymlinks leaves every link out, as Flux's source-controller does.
	SkipSymlinks
)

// maxTreeEntries bounds how many directory entries one walk visits, so a
// tree whose in-root links multiply it (l1/a and l1/b -> ../l0, l2/a and
// l2/b -> ../l1, …) ends with ErrArchiveTooLarge instead of running for
// hours. A variable so tests can lower it.
var maxTreeEntries = 1 << 20

// SkippedLink is a symbolic link a walk did not follow.
type SkippedLink struct {
	// Path is slash-separated and relative to the archive root.
	Path string
	// Target is the link's text as stored on disk.
	Target string
	// Reason says why it was not followed.
	Reason string
}

// treeWalker visits a directory tree in lexical order through an os.Root,
// so that nothing it opens can lie outside the root, whatever links the tree
// holds and however it changes underneath.
type treeWalker struct {
	top        *os.Root
	symlinks   SymlinkPolicy
	maxEntries int

	entries int
	skipped []SkippedLink
}

// treeNode is one entry of the walk. For entries reached through a symbolic
// link at Path, IsDir describes the link's target.
type treeNode struct {
	Path   string // logical path: slash-separated, relative to the root
	Name   string
	IsDir  bool
	Linked bool

	parent  *os.Root
	dirFile *os.File // parent, open for listing
	w       *treeWalker
}

// fileMeta is what an archive needs to know of a file besides its bytes.
type fileMeta struct {
	size int64
	exec bool
}

var (
	errUnsupported = errors.New("not supported on this platform")
	errNotRegular  = errors.New("no longer a regular file")
)

// openFile opens a file node for reading. Plain entries are opened relative
// to their own directory with one system call; links resolve from the top
// root, which follows them only while they stay beneath it.
func (n *treeNode) openFile() (io.ReadCloser, fileMeta, error) {
	if !n.Linked && n.dirFile != nil {
		r, meta, err := openRegularAt(n.dirFile, n.Name)
		if !errors.Is(err, errUnsupported) {
			return r, meta, err
		}
	}
	var f *os.File
	var err error
	if n.Linked {
		f, err = n.w.top.Open(n.Path)
	} else {
		f, err = n.parent.Open(n.Name)
	}
	if err != nil {
		return nil, fileMeta{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fileMeta{}, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fileMeta{}, errNotRegular
	}
	return f, fileMeta{size: fi.Size(), exec: fi.Mode()&0o111 != 0}, nil
}

// visitFunc is called for every file and directory, parents before
// children. For directories it returns whether to walk their contents.
type visitFunc func(n *treeNode) (descend bool, err error)

func (w *treeWalker) walk(ctx context.Context, visit visitFunc) error {
	info, err := w.top.Stat(".")
	if err != nil {
		return fmt.Errorf("reading root: %w", err)
	}
	return w.walkDir(ctx, w.top, "", []fs.FileInfo{info}, visit)
}

func (w *treeWalker) walkDir(ctx context.Context, dir *os.Root, logical string, stack []fs.FileInfo, visit visitFunc) error {
	dirFile, entries, err := readDir(dir)
	if err != nil {
		return fmt.Errorf("reading directory %q: %w", displayPath(logical), err)
	}
	defer dirFile.Close()
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		w.entries++
		if w.maxEntries > 0 && w.entries > w.maxEntries {
			return fmt.Errorf("%w: more than %d entries", ErrArchiveTooLarge, w.maxEntries)
		}
		n := &treeNode{Path: joinLogical(logical, e.Name()), Name: e.Name(), parent: dir, dirFile: dirFile, w: w}
		switch t := e.Type(); {
		case t&fs.ModeSymlink != 0:
			if err := w.visitLink(ctx, n, stack, visit); err != nil {
				return err
			}
		case t.IsDir():
			n.IsDir = true
			if err := w.visitDir(ctx, n, stack, visit); err != nil {
				return err
			}
		case t.IsRegular():
			if _, err := visit(n); err != nil {
				return err
			}
		default:
			// Devices, FIFOs and sockets have no place in an artifact and
			// opening a FIFO would block: leave them out without a word.
		}
	}
	return nil
}

func (w *treeWalker) visitDir(ctx context.Context, n *treeNode, stack []fs.FileInfo, visit visitFunc) error {
	descend, err := visit(n)
	if err != nil || !descend {
		return err
	}
	sub, err := n.parent.OpenRoot(n.Name)
	if err != nil {
		return fmt.Errorf("opening directory %q: %w", n.Path, err)
	}
	defer sub.Close()
	return w.descend(ctx, sub, n.Path, stack, visit)
}

func (w *treeWalker) descend(ctx context.Context, sub *os.Root, logical string, stack []fs.FileInfo, visit visitFunc) error {
	info, err := sub.Stat(".")
	if err != nil {
		return fmt.Errorf("reading directory %q: %w", logical, err)
	}
	return w.walkDir(ctx, sub, logical, append(stack[:len(stack):len(stack)], info), visit)
}

func (w *treeWalker) visitLink(ctx context.Context, n *treeNode, stack []fs.FileInfo, visit visitFunc) error {
	if w.symlinks == SkipSymlinks {
		w.skip(n.Path, "symbolic links are not archived")
		return nil
	}
	// Root.Stat resolves every hop beneath the top root and fails on
	// absolute targets and on any step that leaves the root, even one that
	// would come back in.
	info, err := w.top.Stat(n.Path)
	if err != nil {
		w.skipErr(n.Path, err)
		return nil
	}
	n.Linked = true
	switch {
	case info.Mode().IsRegular():
		_, err := visit(n)
		return err
	case info.IsDir():
		if slices.ContainsFunc(stack, func(a fs.FileInfo) bool { return os.SameFile(a, info) }) {
			w.skip(n.Path, "target is a directory containing the link")
			return nil
		}
		n.IsDir = true
		descend, err := visit(n)
		if err != nil || !descend {
			return err
		}
		sub, err := w.top.OpenRoot(n.Path)
		if err != nil {
			w.skipErr(n.Path, err)
			return nil
		}
		defer sub.Close()
		return w.descend(ctx, sub, n.Path, stack, visit)
	default:
		w.skip(n.Path, "target is neither a regular file nor a directory")
		return nil
	}
}

func (w *treeWalker) skip(p, reason string) {
	target, _ := w.top.Readlink(p)
	w.skipped = append(w.skipped, SkippedLink{Path: p, Target: target, Reason: reason})
}

func (w *treeWalker) skipErr(p string, err error) {
	target, _ := w.top.Readlink(p)
	w.skipped = append(w.skipped, SkippedLink{Path: p, Target: target, Reason: linkReason(err, target)})
}

// linkReason turns a resolution failure into a short reason without the
// absolute paths an *fs.PathError would carry.
func linkReason(err error, target string) string {
	err = withoutPath(err)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "target does not exist"
	case errors.Is(err, syscall.ELOOP):
		return "too many levels of symbolic links"
	case path.IsAbs(target):
		return "target is absolute"
	case strings.Contains(err.Error(), "escapes"): // os.Root's unexported errPathEscapes
		return "target resolves outside the root"
	default:
		return err.Error()
	}
}

// readDir opens a directory and lists it sorted by name, byte-wise, so that
// archives do not depend on the order the file system returns entries in.
// The caller closes the returned File.
func readDir(dir *os.Root) (*os.File, []fs.DirEntry, error) {
	f, err := dir.Open(".")
	if err != nil {
		return nil, nil, err
	}
	entries, err := listDir(f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return f, entries, nil
}

// withoutPath drops the path an *fs.PathError carries, for errors about a
// directory whose location means nothing to the person reading them.
func withoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func joinLogical(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func displayPath(p string) string {
	if p == "" {
		return "."
	}
	return path.Clean(p)
}
