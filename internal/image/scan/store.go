package scan

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ErrNoTags means the store holds no tag list for the repository at the
// asked revision: never scanned, or the storage was emptied (an emptyDir
// after a restart). The reconciler rescans, as Flux does with an empty
// database.
var ErrNoTags = errors.New("no tags stored")

// Store keeps one tag list per ImageRepository under Dir
// (--storage-path): imagerepository/<namespace>/<name>/<hex>.tags, or
// .tags.gz at CompressAbove bytes and more, where <hex> is the revision's
// digest. A new list is written beside the old one and renamed into place,
// then the old one is removed, so a reader holding the previous revision
// finds either it or, briefly, both, never a torn file.
type Store struct {
	Dir string
	// CompressAbove is --storage-compression-threshold in bytes: lists
	// this large or larger are gzipped. 0 never compresses.
	CompressAbove int
}

// Revision is Flux's revision of a tag list: sha256 of the tags, each
// followed by a newline, in order.
func Revision(tags []string) string {
	sum := sha256.Sum256(serialize(tags))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func serialize(tags []string) []byte {
	var b bytes.Buffer
	for _, t := range tags {
		b.WriteString(t)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func (s *Store) dir(namespace, name string) string {
	return filepath.Join(s.Dir, "imagerepository", namespace, name)
}

// Put stores tags (in the order given) for the repository and returns the
// revision and the bytes written.
func (s *Store) Put(namespace, name string, tags []string) (revision string, size int64, err error) {
	data := serialize(tags)
	sum := sha256.Sum256(data)
	hexSum := hex.EncodeToString(sum[:])
	file := hexSum + ".tags"
	if s.CompressAbove > 0 && len(data) >= s.CompressAbove {
		if data, err = gzipBytes(data); err != nil {
			return "", 0, err
		}
		file += ".gz"
	}
	dir := s.dir(namespace, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", 0, fmt.Errorf("failed to create tag storage directory: %w", err)
	}
	if err := writeAtomic(filepath.Join(dir, file), data); err != nil {
		return "", 0, err
	}
	if err := removeOthers(dir, file); err != nil {
		return "", 0, err
	}
	return "sha256:" + hexSum, int64(len(data)), nil
}

// Get reads the tags stored for the repository at revision; ErrNoTags when
// there is no such list.
func (s *Store) Get(namespace, name, revision string) ([]string, error) {
	paths, ok := s.paths(namespace, name, revision)
	if !ok {
		return nil, fmt.Errorf("%w: revision '%s' is not a tag list revision", ErrNoTags, revision)
	}
	for _, path := range paths {
		tags, err := readTags(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		return tags, err
	}
	return nil, fmt.Errorf("%w for ImageRepository %s/%s at revision %s", ErrNoTags, namespace, name, revision)
}

// Has reports whether the repository's tag list at revision is stored,
// without reading it.
func (s *Store) Has(namespace, name, revision string) bool {
	paths, _ := s.paths(namespace, name, revision)
	for _, path := range paths {
		if _, err := os.Stat(path); err == nil {
			return true
		}
	}
	return false
}

// paths are the files the list at revision may be stored in, plain and
// compressed; false for a revision that is not one of Put's.
func (s *Store) paths(namespace, name, revision string) ([]string, bool) {
	hexSum, ok := strings.CutPrefix(revision, "sha256:")
	if !ok || hexSum == "" || strings.ContainsAny(hexSum, `/\.`) {
		return nil, false
	}
	base := filepath.Join(s.dir(namespace, name), hexSum+".tags")
	return []string{base, base + ".gz"}, true
}

// Delete removes what is stored for the repository.
func (s *Store) Delete(namespace, name string) error {
	if err := os.RemoveAll(s.dir(namespace, name)); err != nil {
		return fmt.Errorf("failed to delete tags: %w", err)
	}
	return nil
}

func gzipBytes(data []byte) ([]byte, error) {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(data); err != nil {
		return nil, fmt.Errorf("failed to compress tags: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("failed to compress tags: %w", err)
	}
	return b.Bytes(), nil
}

func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("failed to write tags: %w", err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("failed to write tags: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("failed to write tags: %w", err)
	}
	return nil
}

// removeOthers deletes every file in dir but keep.
func removeOthers(dir, keep string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("failed to clean tag storage: %w", err)
	}
	for _, e := range entries {
		if e.Name() != keep && !strings.HasPrefix(e.Name(), ".tmp-") {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("failed to clean tag storage: %w", err)
			}
		}
	}
	return nil
}

func readTags(path string) (_ []string, retErr error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { retErr = errors.Join(retErr, f.Close()) }()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("failed to open compressed tags: %w", err)
		}
		defer func() { retErr = errors.Join(retErr, gz.Close()) }()
		r = gz
	}
	var tags []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		tags = append(tags, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("failed to read tags: %w", err)
	}
	return tags, nil
}
