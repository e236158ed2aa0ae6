package artifact

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Size bounds applied when ArchiveOptions leaves them zero.
const (
	// DefaultMaxArchiveSize bounds the uncompressed tar stream: file
	// contents plus 512-byte headers and padding.
	DefaultMaxArchiveSize int64 = 1 << 30
	// DefaultMaxArtifactSize bounds any stored file: a compressed archive,
	// or a file stored with Copy.
	DefaultMaxArtifactSize int64 = 512 << 20
)

// ArchiveOptions tunes WriteArchive. The zero value keeps every path,
// follows in-root links and applies the default size bounds.
type ArchiveOptions struct {
	// Filter leaves paths out; nil keeps everything.
	Filter Filter
	// Symlinks says what to do with symbolic links.
	Symlinks SymlinkPolicy
	// MaxSize bounds the uncompressed tar stream; 0 means
	// DefaultMaxArchiveSize, negative means unbounded.
	MaxSize int64
	// MaxCompressedSize bounds the gzip output; 0 means
	// DefaultMaxArtifactSize, negative means unbounded.
	MaxCompressedSize int64
}

// ArchiveStats describes an archive WriteArchive produced.
type ArchiveStats struct {
	Files, Dirs int
	// Size is the uncompressed tar stream length.
	Size int64
	// CompressedSize is the number of bytes written.
	CompressedSize int64
	// SkippedLinks lists the symbolic links left out, in walk order.
	SkippedLinks []SkippedLink
}

// epoch is the modification time of every entry, so archives do not change
// when a checkout does only because it was made at another time.
var epoch = time.Unix(0, 0)

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// WriteArchive writes the tree at dir to w as a gzip-compressed tarball that
// depends only on the tree's paths, contents and executable bits: entries in
// byte-wise path order, modes 0644/0755, times at the Unix epoch, owner 0
// with no names, and a gzip header with neither name nor time. Only regular
// files and directories are written; see SymlinkPolicy for links. The
// archive root itself has no entry.
//
// On error, w has received a partial stream the caller must discard.
// Errors name paths relative to dir, never dir itself, which is usually a
// temporary checkout nobody reading a condition cares about.
func WriteArchive(ctx context.Context, w io.Writer, dir string, opts ArchiveOptions) (ArchiveStats, error) {
	var stats ArchiveStats
	top, err := os.OpenRoot(dir)
	if err != nil {
		return stats, fmt.Errorf("opening the directory to archive: %w", withoutPath(err))
	}
	defer top.Close()

	compressed := &boundedWriter{w: w, max: orDefault(opts.MaxCompressedSize, DefaultMaxArtifactSize), what: "compressed"}
	gz, err := gzip.NewWriterLevel(compressed, gzip.DefaultCompression)
	if err != nil {
		return stats, err
	}
	uncompressed := &boundedWriter{w: gz, max: orDefault(opts.MaxSize, DefaultMaxArchiveSize), what: "uncompressed"}
	tw := tar.NewWriter(uncompressed)

	bufp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bufp)

	prune := false
	if p, ok := opts.Filter.(dirPruner); ok {
		prune = p.prunesExcludedDirs()
	}
	walker := &treeWalker{top: top, symlinks: opts.Symlinks, maxEntries: maxTreeEntries}
	err = walker.walk(ctx, func(n *treeNode) (bool, error) {
		if opts.Filter != nil && opts.Filter.Exclude(n.Path, n.IsDir) {
			// An excluded directory has no entry, but a filter may still
			// re-include things beneath it.
			return n.IsDir && !prune, nil
		}
		if n.IsDir {
			stats.Dirs++
			return true, tw.WriteHeader(dirHeader(n.Path))
		}
		stats.Files++
		return false, writeFile(tw, n, *bufp)
	})
	stats.SkippedLinks = walker.skipped
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	stats.Size, stats.CompressedSize = uncompressed.n, compressed.n
	return stats, err
}

func dirHeader(p string) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: 0o755, ModTime: epoch}
}

func writeFile(tw *tar.Writer, n *treeNode, buf []byte) error {
	r, meta, err := n.openFile()
	if err != nil {
		return fmt.Errorf("opening %s: %w", n.Path, err)
	}
	defer r.Close()
	mode := int64(0o644)
	if meta.exec {
		mode = 0o755
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: n.Path, Size: meta.size, Mode: mode, ModTime: epoch}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	// A file that shrinks while being read fails in the next WriteHeader
	// or Close; one that grows is cut at the size in its header.
	if _, err := io.CopyBuffer(struct{ io.Writer }{tw}, io.LimitReader(r, meta.size), buf); err != nil {
		return fmt.Errorf("archiving %s: %w", n.Path, err)
	}
	return nil
}

// boundedWriter counts bytes and refuses to pass on more than max.
type boundedWriter struct {
	w    io.Writer
	n    int64
	max  int64 // negative: unbounded
	what string
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	if b.max >= 0 && b.n+int64(len(p)) > b.max {
		return 0, fmt.Errorf("%w: %s size exceeds %d bytes", ErrArchiveTooLarge, b.what, b.max)
	}
	n, err := b.w.Write(p)
	b.n += int64(n)
	return n, err
}

func orDefault(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}
