package artifact

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"
)

// DefaultMaxMemoryTree is the most a tarball's files may total for
// ReadTree to hold it in memory when given a budget of 0. A source tree of
// small manifests (1,500 ConfigMaps make 1 MiB) fits many times over;
// creating its files one by one on a disk that etcd keeps busy with fsyncs
// costs about a millisecond each, the longest step before a build starts.
const DefaultMaxMemoryTree int64 = 16 << 20

// memEntryCost is what each entry costs against the budget besides its
// content: the bookkeeping of a name, so that a tarball of many empty
// files cannot hold more memory than its budget says.
const memEntryCost = 256

// ErrNeedsDisk is ReadTree's answer for a tarball it does not hold in
// memory: it has a symbolic or hard link, or its files exceed the budget.
// The tarball is not wrong: extract it with Untar instead.
var ErrNeedsDisk = errors.New("artifact must be extracted to disk")

// Tree is an extracted tarball held in memory: its directories and regular
// files, read-only. It implements io/fs.FS (with ReadFile, ReadDir and Stat)
// over slash-separated names relative to the top, "." being the top. It
// holds no links, so every name is resolved lexically. Its errors are the
// os package's for the same tree on disk (operation and errno: "stat a/b:
// not a directory" where a is a file), with the name given in place of a
// path on disk. Safe for concurrent use.
type Tree struct {
	nodes map[string]*memNode // "." is the top
	size  int64
}

// ReadTree reads a tarball, gzip-compressed or not, into memory with the
// checks and messages of Untar (maxSize bounds it as it bounds Untar). It
// fails with ErrNeedsDisk when the tarball holds a link or when its files
// and entries total more than budget bytes (0 means
// DefaultMaxMemoryTree): such a tarball must be extracted with Untar,
// which also judges whatever entries follow.
func ReadTree(r io.Reader, maxSize, budget int64) (*Tree, error) {
	if budget == 0 {
		budget = DefaultMaxMemoryTree
	}
	m := &memSink{budget: budget, nodes: map[string]*memNode{".": newMemDir(".")}}
	if err := extract(r, maxSize, m); err != nil {
		return nil, err
	}
	t := &Tree{nodes: m.nodes, size: m.used}
	t.link()
	return t, nil
}

// Size is what the tree holds: its files' content and memEntryCost per
// entry.
func (t *Tree) Size() int64 { return t.size }

// link lists every directory's entries, sorted by name.
func (t *Tree) link() {
	for name, n := range t.nodes {
		if name == "." {
			continue
		}
		parent := t.nodes[path.Dir(name)]
		parent.children = append(parent.children, n)
	}
	for _, n := range t.nodes {
		slices.SortFunc(n.children, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	}
}

func (t *Tree) lookup(op, name string) (*memNode, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	n, ok := t.nodes[name]
	if !ok {
		return nil, &fs.PathError{Op: op, Path: name, Err: t.missing(name)}
	}
	return n, nil
}

// missing is the errno of a lookup of name, which is not in the tree:
// ENOTDIR when its nearest ancestor in the tree is a file.
func (t *Tree) missing(name string) error {
	for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
		if n, ok := t.nodes[dir]; ok {
			if !n.IsDir() {
				return syscall.ENOTDIR
			}
			break
		}
	}
	return syscall.ENOENT
}

// Open implements fs.FS.
func (t *Tree) Open(name string) (fs.File, error) {
	n, err := t.lookup("open", name)
	if err != nil {
		return nil, err
	}
	return &openNode{node: n, Reader: bytes.NewReader(n.data)}, nil
}

// ReadFile implements fs.ReadFileFS; the caller may change the bytes.
func (t *Tree) ReadFile(name string) ([]byte, error) {
	n, err := t.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if n.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.EISDIR}
	}
	return slices.Clone(n.data), nil
}

// ReadDir implements fs.ReadDirFS.
func (t *Tree) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := t.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if !n.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOTDIR}
	}
	return slices.Clone(n.children), nil
}

// Stat implements fs.StatFS.
func (t *Tree) Stat(name string) (fs.FileInfo, error) {
	n, err := t.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// memNode is a file or directory of a Tree; it is its own fs.FileInfo
// and fs.DirEntry.
type memNode struct {
	name     string // base name
	data     []byte
	mode     fs.FileMode
	children []fs.DirEntry // directories: sorted by name
}

func newMemDir(name string) *memNode {
	return &memNode{name: path.Base(name), mode: fs.ModeDir | 0o755}
}

func (n *memNode) Name() string               { return n.name }
func (n *memNode) Size() int64                { return int64(len(n.data)) }
func (n *memNode) Mode() fs.FileMode          { return n.mode }
func (n *memNode) ModTime() time.Time         { return time.Time{} }
func (n *memNode) IsDir() bool                { return n.mode.IsDir() }
func (n *memNode) Sys() any                   { return nil }
func (n *memNode) Type() fs.FileMode          { return n.mode.Type() }
func (n *memNode) Info() (fs.FileInfo, error) { return n, nil }

// openNode is an open file or directory of a Tree.
type openNode struct {
	node *memNode
	*bytes.Reader
	listed int // directory entries ReadDir returned so far
}

func (o *openNode) Stat() (fs.FileInfo, error) { return o.node, nil }
func (o *openNode) Close() error               { return nil }

func (o *openNode) Read(p []byte) (int, error) {
	if o.node.IsDir() {
		return 0, &fs.PathError{Op: "read", Path: o.node.name, Err: syscall.EISDIR}
	}
	return o.Reader.Read(p)
}

// ReadDir implements fs.ReadDirFile.
func (o *openNode) ReadDir(count int) ([]fs.DirEntry, error) {
	if !o.node.IsDir() {
		return nil, &fs.PathError{Op: "readdirent", Path: o.node.name, Err: syscall.ENOTDIR}
	}
	rest := o.node.children[o.listed:]
	if count > 0 && len(rest) == 0 {
		return nil, io.EOF
	}
	if count > 0 && count < len(rest) {
		rest = rest[:count]
	}
	o.listed += len(rest)
	return slices.Clone(rest), nil
}

// memSink collects an extraction in memory; links send it to disk.
type memSink struct {
	budget int64
	used   int64
	nodes  map[string]*memNode
}

func (m *memSink) charge(n int64) error {
	if m.budget >= 0 && n > m.budget-m.used {
		return fmt.Errorf("%w: files exceed %d bytes", ErrNeedsDisk, m.budget)
	}
	m.used += n
	return nil
}

func (m *memSink) mkdir(name string) error {
	if err := m.charge(memEntryCost); err != nil {
		return err
	}
	m.nodes[name] = newMemDir(name)
	return nil
}

// clear drops a file an earlier entry wrote at name (the extractor has
// refused to replace a directory; links never get here).
func (m *memSink) clear(name string) error {
	if n, ok := m.nodes[name]; ok {
		m.used -= n.Size() + memEntryCost
		delete(m.nodes, name)
	}
	return nil
}

func (m *memSink) create(name string, exec bool, r io.Reader, size int64) (int64, error) {
	if err := m.charge(size + memEntryCost); err != nil {
		return 0, err
	}
	data := make([]byte, size)
	n, err := io.ReadFull(r, data)
	if err != nil {
		m.used -= size + memEntryCost
		return int64(n), fmt.Errorf("writing %s: %w", name, err)
	}
	mode := fs.FileMode(0o644)
	if exec {
		mode = 0o755
	}
	m.nodes[name] = &memNode{name: path.Base(name), data: data, mode: mode}
	return int64(n), nil
}

func (m *memSink) symlink(name, _ string) error {
	return fmt.Errorf("%w: %q is a symbolic link", ErrNeedsDisk, name)
}

func (m *memSink) link(_, name string) error {
	return fmt.Errorf("%w: %q is a hard link", ErrNeedsDisk, name)
}

func (m *memSink) checkLink(string) error { return nil } // never holds one
func (m *memSink) removeLink(string)      {}
