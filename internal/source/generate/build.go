package generate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// Default bounds of one artifact (Options).
const (
	DefaultMaxSize  int64 = 512 << 20
	DefaultMaxFiles       = 100_000
)

// Options bounds what one artifact may hold. Zero values take the
// defaults; negative values mean unbounded.
type Options struct {
	// MaxSize bounds the bytes written into the artifact, unpacked
	// tarballs included (DefaultMaxSize).
	MaxSize int64
	// MaxFiles bounds the files copied or merged (DefaultMaxFiles).
	MaxFiles int
	// MaxTarballSize bounds the compressed size of a tarball Extract
	// opens (artifact.DefaultMaxDownloadSize).
	MaxTarballSize int64
	// MaxExtractSize bounds what one tarball unpacks to
	// (artifact.DefaultMaxUntarSize), and never more than what MaxSize
	// leaves.
	MaxExtractSize int64
}

func (o Options) withDefaults() Options {
	o.MaxSize = bound(o.MaxSize, DefaultMaxSize)
	o.MaxTarballSize = bound(o.MaxTarballSize, artifact.DefaultMaxDownloadSize)
	o.MaxExtractSize = bound(o.MaxExtractSize, artifact.DefaultMaxUntarSize)
	if o.MaxFiles == 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	return o
}

func bound(v, def int64) int64 {
	if v < 0 {
		return 1<<63 - 1
	}
	return cmp.Or(v, def)
}

// Stats says what a build wrote.
type Stats struct {
	// Files copied, merged or unpacked by copy operations (not counting
	// what tarballs held).
	Files int
	// Bytes written, unpacked tarballs included.
	Bytes int64
	// Overwrites are the files one operation wrote and a later one
	// replaced (the Overwrite strategy, or Merge onto a file that was not
	// there before it): the later copy wins, silently in the cluster.
	Overwrites []Overwrite
}

// Overwrite is a file of the artifact written by two copy operations.
type Overwrite struct {
	// Path is the file's path in the artifact.
	Path string
	// First and Then are the from of the operation that wrote it first
	// and of the one that replaced it.
	First, Then string
}

// Build runs the copy operations in order, reading from sources and
// writing into dst, an existing directory that should be empty. On error
// dst holds part of the artifact and should be discarded.
func Build(ctx context.Context, ops []sourceextensionsv1beta1.CopyOperation, sources Sources, dst string, opts Options) (Stats, error) {
	out, err := os.OpenRoot(dst)
	if err != nil {
		return Stats{}, fmt.Errorf("opening the artifact directory: %w", err)
	}
	b := &builder{ctx: ctx, sources: sources, out: out, outDir: dst, opts: opts.withDefaults(), roots: map[string]*os.Root{},
		writers: map[string]int{}, ops: ops}
	defer b.close()
	for i, op := range ops {
		if err := ctx.Err(); err != nil {
			return b.stats, err
		}
		b.op = i
		if err := b.run(op); err != nil {
			return b.stats, fmt.Errorf("failed to apply copy operation from '%s' to '%s': %w", op.From, op.To, err)
		}
	}
	return b.stats, nil
}

type builder struct {
	ctx     context.Context
	sources Sources
	out     *os.Root
	outDir  string
	opts    Options
	roots   map[string]*os.Root
	stats   Stats
	// ops are the operations of the build, op the index of the one
	// running, writers the index of the one that wrote each copied file.
	ops     []sourceextensionsv1beta1.CopyOperation
	op      int
	writers map[string]int
}

// wrote records that the running operation wrote target, noting an
// earlier operation's file it replaced.
func (b *builder) wrote(target string) {
	target = path.Clean(target)
	if i, ok := b.writers[target]; ok && i != b.op {
		b.stats.Overwrites = append(b.stats.Overwrites, Overwrite{Path: target, First: b.ops[i].From, Then: b.ops[b.op].From})
	}
	b.writers[target] = b.op
}

func (b *builder) close() {
	for _, r := range b.roots {
		_ = r.Close()
	}
	_ = b.out.Close()
}

// root opens the source of alias once per build.
func (b *builder) root(alias string) (*os.Root, error) {
	if r, ok := b.roots[alias]; ok {
		return r, nil
	}
	dir, ok := b.sources[alias]
	if !ok {
		return nil, specErrorf("source alias '%s' not found", alias)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("opening source '%s': %w", alias, err)
	}
	b.roots[alias] = r
	return r, nil
}

// copyOp is one operation, parsed.
type copyOp struct {
	sourceextensionsv1beta1.CopyOperation
	alias, pattern string
	src            *os.Root
	dest           string
	destDir        bool
}

func (b *builder) run(op sourceextensionsv1beta1.CopyOperation) error {
	alias, pattern, err := parseFrom(op.From)
	if err != nil {
		return err
	}
	dest, destDir, err := parseTo(op.To)
	if err != nil {
		return err
	}
	for _, p := range op.Exclude {
		if err := checkPattern(p); err != nil {
			return specErrorf("invalid exclude pattern '%s': %v", p, err)
		}
	}
	switch op.Strategy {
	case "", sourceextensionsv1beta1.OverwriteStrategy, sourceextensionsv1beta1.MergeStrategy, sourceextensionsv1beta1.ExtractStrategy:
	default:
		return specErrorf("unknown strategy '%s'", op.Strategy)
	}
	src, err := b.root(alias)
	if err != nil {
		return err
	}
	c := copyOp{CopyOperation: op, alias: alias, pattern: pattern, src: src, dest: dest, destDir: destDir}
	if !hasGlob(pattern) {
		return b.single(c)
	}
	return b.glob(c)
}

// single copies one named file or directory, cp-like.
func (b *builder) single(c copyOp) error {
	p := path.Clean("/" + c.pattern)[1:]
	if p == "" {
		p = "."
	}
	info, err := b.stat(c.src, p)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("source '%s' does not exist", p)
	}
	if err != nil {
		return err
	}
	if info.IsDir() {
		if c.Strategy == sourceextensionsv1beta1.ExtractStrategy {
			return fmt.Errorf("extract strategy is not supported for directories, got '%s'", p)
		}
		target := c.dest
		if p != "." {
			target = path.Join(c.dest, path.Base(p))
		}
		return b.copyDir(c, p, target, p)
	}
	if excluded(p, ".", c.Exclude) {
		return nil
	}
	if c.Strategy == sourceextensionsv1beta1.ExtractStrategy {
		if !isTarball(p) {
			return fmt.Errorf("extract strategy requires tarball file (.tar.gz or .tgz), got '%s'", p)
		}
		return b.extract(c.src, p, c.dest)
	}
	target := c.dest
	if c.destDir || b.isOutDir(c.dest) {
		target = path.Join(c.dest, path.Base(p))
	}
	return b.copyFile(c, p, target)
}

// glob copies every match of a wildcard pattern into the destination
// directory.
func (b *builder) glob(c copyOp) error {
	entries, err := list(c.src)
	if err != nil {
		return err
	}
	prefix, recursive := strings.CutSuffix(c.pattern, "/**")
	base := literalPrefix(c.pattern)
	var matched, kept int
	var covered []string
	for _, e := range entries {
		if !match(c.pattern, e.path) || (recursive && e.path == prefix) {
			continue
		}
		matched++
		if under(e.path, covered) {
			continue
		}
		if excluded(e.path, base, c.Exclude) {
			if e.dir {
				covered = append(covered, e.path)
			}
			continue
		}
		kept++
		if c.Strategy == sourceextensionsv1beta1.ExtractStrategy {
			if !e.dir && isTarball(e.path) {
				if err := b.extract(c.src, e.path, c.dest); err != nil {
					return fmt.Errorf("failed to extract tarball '%s' to '%s': %w", e.path, c.dest, err)
				}
			}
			continue
		}
		rel := e.path
		if recursive && prefix != "" {
			rel = strings.TrimPrefix(e.path, prefix+"/")
		}
		target := path.Join(c.dest, rel)
		if e.dir {
			covered = append(covered, e.path)
			if err := b.copyDir(c, e.path, target, base); err != nil {
				return err
			}
			continue
		}
		if err := b.copyFile(c, e.path, target); err != nil {
			return fmt.Errorf("failed to copy file '%s' to '%s': %w", e.path, target, err)
		}
	}
	switch {
	case matched == 0:
		return fmt.Errorf("no files match pattern '%s' in source '%s'", c.pattern, c.alias)
	case kept == 0:
		return fmt.Errorf("all files matching pattern '%s' in source '%s' were excluded", c.pattern, c.alias)
	}
	return nil
}

// under reports whether p lies below one of dirs.
func under(p string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

type entry struct {
	path string
	dir  bool
}

// list walks a source in lexical order, parents before children, without
// following links.
func list(src *os.Root) ([]entry, error) {
	var out []entry
	err := fs.WalkDir(src.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." {
			out = append(out, entry{path: p, dir: d.IsDir()})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walking source: %w", err)
	}
	return out, nil
}

// copyDir copies the directory p of the source to target, skipping what
// the exclude patterns leave out (relative to base).
func (b *builder) copyDir(c copyOp, p, target, base string) error {
	return fs.WalkDir(c.src.FS(), p, func(sp string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := b.ctx.Err(); err != nil {
			return err
		}
		rel := "."
		if sp != p {
			rel = strings.TrimPrefix(sp, strings.TrimSuffix(p, "/")+"/")
			if p == "." {
				rel = sp
			}
			if excluded(sp, base, c.Exclude) {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
		}
		t := path.Join(target, rel)
		if d.IsDir() {
			return b.mkdir(t)
		}
		if err := b.copyFile(c, sp, t); err != nil {
			return fmt.Errorf("failed to copy file '%s' to '%s': %w", sp, t, err)
		}
		return nil
	})
}

// stat is Stat through the source root, refusing links that lead out of
// the source or to a directory.
func (b *builder) stat(src *os.Root, p string) (fs.FileInfo, error) {
	li, err := src.Lstat(p)
	if err != nil {
		return nil, err
	}
	if li.Mode()&fs.ModeSymlink == 0 {
		return li, nil
	}
	fi, err := src.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, mark(ErrUnsafeSource, "symlink '%s' does not resolve to a file of the source", p)
	case err != nil:
		return nil, mark(ErrUnsafeSource, "symlink '%s' points outside the source", p)
	case fi.IsDir():
		return nil, mark(ErrUnsafeSource, "symlink '%s' points to a directory, which copy does not follow", p)
	}
	return fi, nil
}

func (b *builder) isOutDir(p string) bool {
	fi, err := b.out.Stat(p)
	return err == nil && fi.IsDir()
}

func (b *builder) mkdir(p string) error {
	if p == "." {
		return nil
	}
	if err := b.out.MkdirAll(p, 0o755); err != nil {
		return fmt.Errorf("failed to create destination directory: %w", err)
	}
	return nil
}

// charge counts a file of size bytes against the bounds.
func (b *builder) charge(p string, size int64) error {
	b.stats.Files++
	if b.stats.Files > b.opts.MaxFiles {
		return mark(ErrTooLarge, "artifact holds more than %d files", b.opts.MaxFiles)
	}
	if size > b.opts.MaxSize-b.stats.Bytes {
		return mark(ErrTooLarge, "writing '%s' (%d bytes) takes the artifact over %d bytes", p, size, b.opts.MaxSize)
	}
	b.stats.Bytes += size
	return nil
}

// copyFile copies (or merges) the source file p to target.
func (b *builder) copyFile(c copyOp, p, target string) error {
	info, err := b.stat(c.src, p)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("'%s' is not a regular file", p)
	}
	if c.Strategy == sourceextensionsv1beta1.MergeStrategy {
		if fi, err := b.out.Stat(target); err == nil && fi.Mode().IsRegular() {
			return b.merge(c.src, p, target, info.Size())
		}
	}
	if err := b.charge(target, info.Size()); err != nil {
		return err
	}
	if err := b.mkdir(path.Dir(target)); err != nil {
		return err
	}
	in, err := c.src.Open(p)
	if err != nil {
		return fmt.Errorf("opening '%s': %w", p, err)
	}
	defer in.Close()
	mode := fs.FileMode(0o644)
	if info.Mode()&0o111 != 0 {
		mode = 0o755
	}
	w, err := b.out.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return fmt.Errorf("creating '%s': %w", target, err)
	}
	b.wrote(target)
	// A file that grew since it was measured is cut at its measured size
	// plus one byte, which the size check below then refuses.
	n, err := io.Copy(w, io.LimitReader(in, info.Size()+1))
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing '%s': %w", target, err)
	}
	if n != info.Size() {
		return fmt.Errorf("'%s' changed while it was copied", p)
	}
	return b.out.Chmod(target, mode)
}

// extract unpacks the tarball p of the source into dest, bounded before a
// byte is read: the compressed file by MaxTarballSize, what it unpacks to
// by MaxExtractSize and what the artifact may still take.
func (b *builder) extract(src *os.Root, p, dest string) error {
	info, err := b.stat(src, p)
	if err != nil {
		return err
	}
	if info.Size() > b.opts.MaxTarballSize {
		return mark(ErrTooLarge, "tarball '%s' is %d bytes, more than the %d allowed", p, info.Size(), b.opts.MaxTarballSize)
	}
	limit := min(b.opts.MaxExtractSize, b.opts.MaxSize-b.stats.Bytes)
	if limit <= 0 {
		return mark(ErrTooLarge, "artifact is full (%d bytes) before unpacking '%s'", b.opts.MaxSize, p)
	}
	if err := b.mkdir(dest); err != nil {
		return err
	}
	before, err := b.treeSize(dest)
	if err != nil {
		return err
	}
	in, err := src.Open(p)
	if err != nil {
		return fmt.Errorf("opening '%s': %w", p, err)
	}
	defer in.Close()
	b.stats.Files++
	if err := artifact.Untar(in, filepath.Join(b.outDir, filepath.FromSlash(dest)), limit); err != nil {
		if errors.Is(err, artifact.ErrArchiveTooLarge) {
			return mark(ErrTooLarge, "tarball '%s' unpacks to more than %d bytes", p, limit)
		}
		return err
	}
	after, err := b.treeSize(dest)
	if err != nil {
		return err
	}
	b.stats.Bytes += max(after-before, 0)
	if b.stats.Bytes > b.opts.MaxSize {
		return mark(ErrTooLarge, "unpacking '%s' takes the artifact over %d bytes", p, b.opts.MaxSize)
	}
	return nil
}

// treeSize sums the sizes of the regular files under p of the artifact.
func (b *builder) treeSize(p string) (int64, error) {
	var n int64
	err := fs.WalkDir(b.out.FS(), p, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("measuring '%s': %w", p, err)
	}
	return n, nil
}
