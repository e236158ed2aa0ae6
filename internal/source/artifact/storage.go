package artifact

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

// Options configures a Storage. The zero value is usable.
type Options struct {
	// DigestAlgorithm is used for new artifacts (--artifact-digest-algo);
	// empty means sha256. Verify reads the algorithm from each digest.
	DigestAlgorithm Algorithm
	// Symlinks says what Archive does with symbolic links.
	Symlinks SymlinkPolicy
	// MaxArchiveSize bounds the uncompressed tar stream Archive writes; 0
	// means DefaultMaxArchiveSize, negative means unbounded.
	MaxArchiveSize int64
	// MaxArtifactSize bounds every stored file; 0 means
	// DefaultMaxArtifactSize, negative means unbounded.
	MaxArtifactSize int64
	// Now is the clock for LastUpdateTime, file times and GarbageCollect;
	// nil means time.Now.
	Now func() time.Time
}

// Storage keeps artifacts under a root directory (--storage-path) at
// <kind>/<namespace>/<name>/<file> and tells where they are served
// (--storage-adv-addr). All file access goes through an os.Root, so links
// planted in the storage directory cannot make it read, write or delete
// anything outside.
type Storage struct {
	path     string
	root     *os.Root
	hostname string
	alg      Algorithm
	opts     Options
	locks    keyedLock
}

// NewStorage creates root if needed and opens it. hostname is the address
// artifact URLs advertise: host[:port], or a base URL with a scheme.
func NewStorage(root, hostname string, opts Options) (*Storage, error) {
	alg, err := ParseAlgorithm(string(opts.DigestAlgorithm))
	if err != nil {
		return nil, err
	}
	if hostname == "" {
		return nil, errors.New("storage: advertised hostname is empty")
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("creating storage directory: %w", err)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("opening storage directory: %w", err)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Storage{path: root, root: r, hostname: strings.TrimSuffix(hostname, "/"), alg: alg, opts: opts}, nil
}

// Close releases the storage directory handle.
func (s *Storage) Close() error { return s.root.Close() }

// Algorithm is the digest algorithm of new artifacts (--artifact-digest-algo).
func (s *Storage) Algorithm() Algorithm { return s.alg }

// BasePath is the storage root as given to NewStorage.
func (s *Storage) BasePath() string { return s.path }

// NewArtifactFor describes the artifact fileName of obj, a kind object, at
// revision: its path and URL. Nothing is written; Digest, Size and
// LastUpdateTime are filled by Archive or Copy.
func (s *Storage) NewArtifactFor(kind string, obj metav1.Object, revision, fileName string) meta.Artifact {
	p := ObjectDir(kind, obj.GetNamespace(), obj.GetName()) + "/" + fileName
	return meta.Artifact{Path: p, URL: s.URL(p), Revision: revision}
}

// ObjectDir is the storage directory of an object: <kind-lowercase>/<ns>/<name>.
func ObjectDir(kind, namespace, name string) string {
	return strings.ToLower(kind) + "/" + namespace + "/" + name
}

// URL is where the server advertises the file at artifactPath.
func (s *Storage) URL(artifactPath string) string {
	segs := strings.Split(artifactPath, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	base := s.hostname
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	return base + "/" + strings.Join(segs, "/")
}

// LocalPath is the file system path of a, after checking its shape.
func (s *Storage) LocalPath(a meta.Artifact) (string, error) {
	rel, err := artifactRel(a.Path)
	if err != nil {
		return "", err
	}
	return s.path + string(os.PathSeparator) + rel, nil
}

// Exists reports whether a is stored as a regular file.
func (s *Storage) Exists(a meta.Artifact) bool {
	rel, err := artifactRel(a.Path)
	if err != nil {
		return false
	}
	fi, err := s.root.Lstat(rel)
	return err == nil && fi.Mode().IsRegular()
}

// Open opens the stored file of a for reading.
func (s *Storage) Open(a meta.Artifact) (*os.File, error) {
	rel, err := artifactRel(a.Path)
	if err != nil {
		return nil, err
	}
	return openRegular(s.root, rel)
}

// Verify checks that the stored file of a still has a's digest and size.
func (s *Storage) Verify(a meta.Artifact) error {
	alg, want, err := ParseDigest(a.Digest)
	if err != nil {
		return fmt.Errorf("verifying %s: %w", a.Path, err)
	}
	f, err := s.Open(a)
	if err != nil {
		return fmt.Errorf("verifying %s: %w", a.Path, err)
	}
	defer f.Close()
	d, err := newDigester(alg)
	if err != nil {
		return err
	}
	n, err := io.Copy(d, f)
	if err != nil {
		return fmt.Errorf("verifying %s: %w", a.Path, err)
	}
	if got := d.String(); got != string(alg)+":"+want {
		return fmt.Errorf("%w: %s has %s, artifact records %s", ErrDigestMismatch, a.Path, got, a.Digest)
	}
	if a.Size != nil && *a.Size != n {
		return fmt.Errorf("%w: %s has %d bytes, artifact records %d", ErrDigestMismatch, a.Path, n, *a.Size)
	}
	return nil
}

// Archive stores the tree at dir as a's tarball (see WriteArchive), leaving
// out what filter excludes (NewFilter gives Flux's rules; nil keeps
// everything, .git included), and fills a's Digest, Size and
// LastUpdateTime. The file appears at its path complete or not at all. The
// stats list the links that were not followed, worth an event.
func (s *Storage) Archive(ctx context.Context, a *meta.Artifact, dir string, filter Filter) (ArchiveStats, error) {
	var stats ArchiveStats
	err := s.writeAtomic(ctx, a, func(w io.Writer) error {
		var err error
		stats, err = WriteArchive(ctx, w, dir, ArchiveOptions{
			Filter:            filter,
			Symlinks:          s.opts.Symlinks,
			MaxSize:           s.opts.MaxArchiveSize,
			MaxCompressedSize: s.opts.MaxArtifactSize,
		})
		return err
	})
	return stats, err
}

// Copy stores what r yields as a's file, for content that is already an
// artifact (a Helm index or chart, an OCI layer copied as is), and fills
// a's Digest, Size and LastUpdateTime. More than MaxArtifactSize bytes fail
// with ErrArchiveTooLarge and store nothing.
func (s *Storage) Copy(ctx context.Context, a *meta.Artifact, r io.Reader) error {
	return s.writeAtomic(ctx, a, func(w io.Writer) error {
		_, err := io.Copy(w, contextReader{ctx: ctx, r: r})
		return err
	})
}

// CopyFromPath is Copy from the regular file at p.
func (s *Storage) CopyFromPath(ctx context.Context, a *meta.Artifact, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("copying into %s: %w", a.Path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("copying into %s: %s is not a regular file", a.Path, path.Base(p))
	}
	return s.Copy(ctx, a, f)
}

// Remove deletes the stored file of a; a missing file is not an error.
func (s *Storage) Remove(a meta.Artifact) error {
	rel, err := artifactRel(a.Path)
	if err != nil {
		return err
	}
	if err := s.root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", rel, err)
	}
	return nil
}

// RemoveAll deletes the directory of one object with all its files, as its
// finalizer does, and returns that directory relative to the root.
func (s *Storage) RemoveAll(kind, namespace, name string) (string, error) {
	dir := ObjectDir(kind, namespace, name)
	if err := checkSegments(dir, 3); err != nil {
		return "", err
	}
	if err := s.root.RemoveAll(dir); err != nil {
		return dir, fmt.Errorf("removing %s: %w", dir, err)
	}
	return dir, nil
}

// Lock serialises work on one object's artifacts (archive, record, garbage
// collect) across goroutines of this process. It waits until the lock is
// free or ctx ends; call the returned func to release it.
func (s *Storage) Lock(ctx context.Context, kind, namespace, name string) (func(), error) {
	return s.locks.lock(ctx, ObjectDir(kind, namespace, name))
}

// writeAtomic writes a's file through a temporary file in the same
// directory, synced and then renamed over the final name, so a reader sees
// the old file or the new one and never a part.
func (s *Storage) writeAtomic(ctx context.Context, a *meta.Artifact, write func(io.Writer) error) (err error) {
	rel, err := artifactRel(a.Path)
	if err != nil {
		return err
	}
	dir := path.Dir(rel)
	if err := s.root.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	d, err := newDigester(s.alg)
	if err != nil {
		return err
	}
	tmp, f, err := createTemp(s.root, dir, path.Base(rel))
	if err != nil {
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			_ = s.root.Remove(tmp)
		}
	}()

	out := &boundedWriter{w: io.MultiWriter(f, d), max: orDefault(s.opts.MaxArtifactSize, DefaultMaxArtifactSize), what: "artifact"}
	bw := bufferedWriter(out)
	if err := write(bw); err != nil {
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", rel, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", rel, err)
	}
	now := s.opts.Now()
	if err := s.root.Chtimes(tmp, now, now); err != nil {
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	if err := s.root.Rename(tmp, rel); err != nil {
		return fmt.Errorf("storing %s: %w", rel, err)
	}
	if err := syncDir(s.root, dir); err != nil {
		return fmt.Errorf("storing %s: %w", rel, err)
	}
	size := out.n
	a.Digest = d.String()
	a.Size = &size
	a.LastUpdateTime = metav1.NewTime(now)
	return nil
}

// tempPrefix starts the names of files being written. Artifact file names
// never start with a dot, so the server and GarbageCollect can tell them
// apart.
const tempPrefix = "."

func createTemp(root *os.Root, dir, base string) (string, *os.File, error) {
	for range 10 {
		name := dir + "/" + tempPrefix + base + ".tmp-" + randomSuffix()
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return name, f, err
	}
	return "", nil, errors.New("could not create a temporary file")
}

// bufferedWriter gives the gzip output larger writes before they reach the
// file and the digest.
func bufferedWriter(w io.Writer) *bufio.Writer { return bufio.NewWriterSize(w, 64<<10) }

func randomSuffix() string { return rand.Text()[:12] }

func syncDir(root *os.Root, dir string) error {
	f, err := root.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func openRegular(root *os.Root, rel string) (*os.File, error) {
	f, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w", rel, fs.ErrNotExist)
	}
	return f, nil
}

// artifactRel checks that p is <kind>/<namespace>/<name>/<file> made of
// plain segments and returns it.
func artifactRel(p string) (string, error) {
	if err := checkSegments(p, 4); err != nil {
		return "", err
	}
	return p, nil
}

func checkSegments(p string, n int) error {
	segs := strings.Split(p, "/")
	if len(segs) != n {
		return fmt.Errorf("%w %q: want %d slash-separated segments", ErrInvalidPath, p, n)
	}
	for _, seg := range segs {
		if !validSegment(seg) {
			return fmt.Errorf("%w %q: segment %q", ErrInvalidPath, p, seg)
		}
	}
	return nil
}

// validSegment rejects empty segments, "." and "..", names starting with a
// dot (temporary files), and separators or NUL of any platform.
func validSegment(seg string) bool {
	return seg != "" && !strings.HasPrefix(seg, ".") && !strings.ContainsAny(seg, "/\\\x00")
}

type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
