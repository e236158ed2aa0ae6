package artifact

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// DefaultMaxUntarSize applies when Untar is given a maxSize of 0.
const DefaultMaxUntarSize int64 = 100 << 20

type entryKind int

const (
	kindDir entryKind = iota + 1
	kindFile
	kindLink
)

// Untar extracts a tarball, gzip-compressed or not, into dir, creating dir
// if needed. maxSize bounds both the uncompressed tar stream and the total
// size of the files written; 0 means DefaultMaxUntarSize, negative means
// unbounded. Exceeding it fails with ErrArchiveTooLarge.
//
// Entries fail with ErrUnsafeEntry when their names are absolute, climb out
// with "..", hold a backslash or NUL, or are longer than 4096 bytes; when
// they would be written through a symbolic link or replace a directory;
// when they are devices, FIFOs or of unknown type; or when they are links
// that do not resolve inside dir: symbolic links must be relative and
// resolve inside dir once extraction ends (checked through an os.Root,
// which rejects even a detour outside), hard links must name a regular file
// extracted earlier. In-root links are kept as links.
// Files get mode 0644 or 0755 after their executable bit, directories 0755;
// owners and times are not restored.
//
// On error dir may hold part of the archive, but never a symbolic link that
// resolves outside it; callers extract into a fresh directory and remove it
// on error.
func Untar(r io.Reader, dir string, maxSize int64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("untar: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("untar: %w", err)
	}
	defer root.Close()
	d := &diskSink{root: root}
	defer d.closeHandles()
	return extract(r, maxSize, d)
}

// extract reads the tarball r into out, with the validation Untar
// documents; the one reader and the one set of checks behind Untar and
// ReadTree.
func extract(r io.Reader, maxSize int64, out sink) error {
	if maxSize == 0 {
		maxSize = DefaultMaxUntarSize
	}
	br := bufio.NewReader(r)
	var src io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("untar: reading gzip header: %w", err)
		}
		defer gz.Close()
		src = gz
	}
	x := &extractor{out: out, max: maxSize, kinds: map[string]entryKind{}}
	if err := x.run(tar.NewReader(&boundedReader{r: src, max: maxSize})); err != nil {
		x.removeLinks()
		return fmt.Errorf("untar: %w", err)
	}
	return nil
}

// maxEntryName bounds entry names and link targets, as PATH_MAX does for
// the tools that will read the tree.
const maxEntryName = 4096

// maxDirHandles bounds the directory handles an extraction keeps open.
const maxDirHandles = 128

// sink is where an extraction puts the entries the extractor has checked:
// a directory (diskSink) or memory (memSink). Names are cleaned and
// relative; the extractor has made sure every parent is a directory it
// created and that nothing it knows of is in the way.
type sink interface {
	// mkdir makes name a directory unless one is there.
	mkdir(name string) error
	// clear removes what is at name (never a directory the extractor made).
	clear(name string) error
	// create writes a regular file of size bytes from r; it returns the
	// bytes written.
	create(name string, exec bool, r io.Reader, size int64) (int64, error)
	symlink(name, target string) error
	link(target, name string) error
	// checkLink verifies, once all entries are in, that a symbolic link
	// resolves inside the tree.
	checkLink(name string) error
	removeLink(name string)
}

type extractor struct {
	out     sink
	max     int64
	written int64
	kinds   map[string]entryKind // what this extraction put or found at each path
	links   []string             // symbolic links created, in order
}

func (x *extractor) run(tr *tar.Reader) error {
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return x.verifyLinks()
		}
		if err != nil {
			return fmt.Errorf("reading tar: %w", err)
		}
		if err := x.entry(hdr, tr); err != nil {
			return err
		}
	}
}

func (x *extractor) entry(hdr *tar.Header, r io.Reader) error {
	name, err := entryName(hdr.Name)
	if err != nil {
		return err
	}
	switch hdr.Typeflag {
	case tar.TypeXGlobalHeader:
		return nil
	case tar.TypeDir:
		if name == "" {
			return nil
		}
		if err := x.parents(name); err != nil {
			return err
		}
		return x.ensureDir(name)
	case tar.TypeReg, tar.TypeGNUSparse:
		return x.file(name, hdr, r)
	case tar.TypeSymlink:
		return x.symlink(name, hdr.Linkname)
	case tar.TypeLink:
		return x.hardlink(name, hdr.Linkname)
	default:
		return fmt.Errorf("%w: %q has type %q", ErrUnsafeEntry, hdr.Name, hdr.Typeflag)
	}
}

// entryName cleans a member name into a path relative to the extraction
// directory; "" names the directory itself.
func entryName(n string) (string, error) {
	if n == "" || len(n) > maxEntryName || strings.ContainsAny(n, "\\\x00") {
		return "", fmt.Errorf("%w: name %.100q", ErrUnsafeEntry, n)
	}
	if path.IsAbs(n) {
		return "", fmt.Errorf("%w: %q is absolute", ErrUnsafeEntry, n)
	}
	c := path.Clean(n)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%w: %q leaves the directory", ErrUnsafeEntry, n)
	}
	if c == "." {
		return "", nil
	}
	return c, nil
}

// splitName splits a cleaned name into its parent ("" for the top) and
// last element.
func splitName(name string) (string, string) {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return "", name
}

// parents makes sure every ancestor of name is a real directory, creating
// missing ones, so nothing is ever written through a symbolic link.
func (x *extractor) parents(name string) error {
	for i := 0; i < len(name); i++ {
		if name[i] == '/' {
			if err := x.ensureDir(name[:i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// ensureDir makes p a directory; its parent must already be one.
func (x *extractor) ensureDir(p string) error {
	switch x.kinds[p] {
	case kindDir:
		return nil
	case kindLink:
		return fmt.Errorf("%w: %q is a symbolic link, not a directory", ErrUnsafeEntry, p)
	case kindFile:
		return fmt.Errorf("%w: %q is a file, not a directory", ErrUnsafeEntry, p)
	}
	if err := x.out.mkdir(p); err != nil {
		return err
	}
	x.kinds[p] = kindDir
	return nil
}

// prepare readies the place of a new non-directory entry: real parent
// directories, nothing left at the name itself; directories stay and
// conflict.
func (x *extractor) prepare(name string) error {
	if err := x.parents(name); err != nil {
		return err
	}
	if x.kinds[name] == kindDir {
		return fmt.Errorf("%w: %q would replace a directory", ErrUnsafeEntry, name)
	}
	if err := x.out.clear(name); err != nil {
		return err
	}
	delete(x.kinds, name)
	return nil
}

func (x *extractor) file(name string, hdr *tar.Header, r io.Reader) error {
	if name == "" {
		return fmt.Errorf("%w: file entry %q names the directory itself", ErrUnsafeEntry, hdr.Name)
	}
	if x.max >= 0 && hdr.Size > x.max-x.written {
		return fmt.Errorf("%w: files exceed %d bytes", ErrArchiveTooLarge, x.max)
	}
	if err := x.prepare(name); err != nil {
		return err
	}
	n, err := x.out.create(name, hdr.Mode&0o111 != 0, io.LimitReader(r, hdr.Size), hdr.Size)
	x.written += n
	if err != nil {
		return err
	}
	x.kinds[name] = kindFile
	return nil
}

func (x *extractor) symlink(name, target string) error {
	if name == "" {
		return fmt.Errorf("%w: link entry names the directory itself", ErrUnsafeEntry)
	}
	if target == "" || len(target) > maxEntryName || strings.ContainsAny(target, "\\\x00") || path.IsAbs(target) {
		return fmt.Errorf("%w: symbolic link %q -> %.100q", ErrUnsafeEntry, name, target)
	}
	if c := path.Join(path.Dir(name), target); c == ".." || strings.HasPrefix(c, "../") {
		return fmt.Errorf("%w: symbolic link %q -> %q leaves the directory", ErrUnsafeEntry, name, target)
	}
	if err := x.prepare(name); err != nil {
		return err
	}
	if err := x.out.symlink(name, target); err != nil {
		return err
	}
	x.kinds[name] = kindLink
	x.links = append(x.links, name)
	return nil
}

func (x *extractor) hardlink(name, target string) error {
	if name == "" {
		return fmt.Errorf("%w: link entry names the directory itself", ErrUnsafeEntry)
	}
	t, err := entryName(target)
	if err != nil {
		return fmt.Errorf("hard link %q: %w", name, err)
	}
	if x.kinds[t] != kindFile {
		return fmt.Errorf("%w: hard link %q -> %q does not name a file extracted before it", ErrUnsafeEntry, name, target)
	}
	if t == name {
		return nil
	}
	if err := x.prepare(name); err != nil {
		return err
	}
	if err := x.out.link(t, name); err != nil {
		return err
	}
	x.kinds[name] = kindFile
	return nil
}

// verifyLinks resolves every symbolic link left in place. The lexical check
// at creation cannot see links that later entries put on the way (a link
// through "s/.." where s -> "."), so the final word is the sink's, which
// walks the real tree and refuses any step outside.
func (x *extractor) verifyLinks() error {
	for _, l := range x.links {
		if x.kinds[l] != kindLink {
			continue // replaced by a later entry
		}
		if err := x.out.checkLink(l); err != nil {
			return err
		}
	}
	return nil
}

// removeLinks deletes the links this extraction created after a failure,
// so an unchecked link never outlives a failed Untar.
func (x *extractor) removeLinks() {
	for _, l := range x.links {
		if x.kinds[l] == kindLink {
			x.out.removeLink(l)
		}
	}
}

// diskSink writes into a directory through an os.Root.
type diskSink struct {
	root    *os.Root
	handles map[string]*os.Root // open directories, so that creating an entry costs one step, not one per level
	buf     []byte
}

func (d *diskSink) mkdir(p string) error {
	parent, base, err := d.at(p)
	if err != nil {
		return err
	}
	fi, err := parent.Lstat(base)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := parent.Mkdir(base, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", p, withoutPath(err))
		}
	case err != nil:
		return fmt.Errorf("checking %s: %w", p, withoutPath(err))
	case !fi.IsDir():
		return fmt.Errorf("%w: %q exists and is not a directory", ErrUnsafeEntry, p)
	}
	return nil
}

// at returns a handle on the parent directory of name, which the
// extractor has checked, and name's last element.
func (d *diskSink) at(name string) (*os.Root, string, error) {
	dir, base := splitName(name)
	h, err := d.dirHandle(dir)
	return h, base, err
}

func (d *diskSink) dirHandle(dir string) (*os.Root, error) {
	if dir == "" {
		return d.root, nil
	}
	if h := d.handles[dir]; h != nil {
		return h, nil
	}
	parent, base, err := d.at(dir)
	if err != nil {
		return nil, err
	}
	h, err := parent.OpenRoot(base)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", dir, withoutPath(err))
	}
	if len(d.handles) >= maxDirHandles {
		d.closeHandles()
	}
	if d.handles == nil {
		d.handles = map[string]*os.Root{}
	}
	d.handles[dir] = h
	return h, nil
}

func (d *diskSink) closeHandles() {
	for _, h := range d.handles {
		h.Close()
	}
	d.handles = nil
}

// clear removes what an earlier entry or the directory holds at name, so a
// new entry never writes through it.
func (d *diskSink) clear(name string) error {
	parent, base, err := d.at(name)
	if err != nil {
		return err
	}
	fi, err := parent.Lstat(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("checking %s: %w", name, withoutPath(err))
	}
	if fi.IsDir() {
		return fmt.Errorf("%w: %q would replace a directory", ErrUnsafeEntry, name)
	}
	if err := parent.Remove(base); err != nil {
		return fmt.Errorf("replacing %s: %w", name, withoutPath(err))
	}
	return nil
}

func (d *diskSink) create(name string, exec bool, r io.Reader, _ int64) (int64, error) {
	parent, base, err := d.at(name)
	if err != nil {
		return 0, err
	}
	mode := fs.FileMode(0o644)
	if exec {
		mode = 0o755
	}
	f, err := parent.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return 0, fmt.Errorf("creating %s: %w", name, withoutPath(err))
	}
	if d.buf == nil {
		d.buf = make([]byte, 32<<10)
	}
	n, err := io.CopyBuffer(struct{ io.Writer }{f}, r, d.buf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("writing %s: %w", name, err)
	}
	return n, nil
}

func (d *diskSink) symlink(name, target string) error {
	parent, base, err := d.at(name)
	if err != nil {
		return err
	}
	if err := parent.Symlink(target, base); err != nil {
		return fmt.Errorf("creating %s: %w", name, withoutPath(err))
	}
	return nil
}

func (d *diskSink) link(target, name string) error {
	if err := d.root.Link(target, name); err != nil {
		return fmt.Errorf("creating %s: %w", name, withoutPath(err))
	}
	return nil
}

// checkLink resolves l through Root.Stat, which refuses any step outside.
func (d *diskSink) checkLink(l string) error {
	if _, err := d.root.Stat(l); err != nil {
		target, _ := d.root.Readlink(l)
		return fmt.Errorf("%w: symbolic link %q -> %q does not resolve inside the directory: %s",
			ErrUnsafeEntry, l, target, linkReason(err, target))
	}
	return nil
}

func (d *diskSink) removeLink(l string) { _ = d.root.Remove(l) }

// boundedReader fails once more than max bytes have been read.
type boundedReader struct {
	r   io.Reader
	n   int64
	max int64 // negative: unbounded
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.max >= 0 {
		if b.n >= b.max {
			// One byte beyond the bound tells a stream that ends exactly at
			// it from one that goes on.
			var one [1]byte
			n, err := io.ReadFull(b.r, one[:])
			if n > 0 {
				return 0, fmt.Errorf("%w: uncompressed stream exceeds %d bytes", ErrArchiveTooLarge, b.max)
			}
			return 0, err
		}
		if rest := b.max - b.n; int64(len(p)) > rest {
			p = p[:rest]
		}
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}
