package helmrepo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"time"

	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// Previous is what the caller knows of the index it stored last, so that
// FetchIndex can skip work: the HTTP validators are sent back
// (If-None-Match, If-Modified-Since), and an index whose digest equals
// Digest is not parsed again.
type Previous struct {
	ETag         string
	LastModified string
	// Digest is the revision of the stored index, sha256:<hex>.
	Digest string
}

// Index is a fetched repository index.
type Index struct {
	// File is the parsed index: invalid chart versions dropped, entries
	// sorted newest first (Helm's loader). Nil when FetchIndex reports no
	// change.
	File *repo.IndexFile
	// Digest is sha256:<hex> of the bytes the server sent: Flux's
	// HelmRepository revision. Empty when the server answered 304.
	Digest string
	// Size is how many bytes the server sent.
	Size int64
	// ETag and LastModified are the response's validators, for the next
	// FetchIndex.
	ETag         string
	LastModified string
}

// Previous returns what the next FetchIndex needs to know of this index.
func (i *Index) Previous() Previous {
	return Previous{ETag: i.ETag, LastModified: i.LastModified, Digest: i.Digest}
}

// FetchIndex downloads <url>/index.yaml. changed is false, and the index is
// not parsed, when the server answers 304 Not Modified to prev's
// validators or sends bytes whose digest is prev.Digest; the returned Index
// then carries only the validators (and the digest, after a 200).
//
// The body is streamed to a temporary file while it is hashed and counted;
// more than Limits.MaxIndexSize bytes fail with ErrTooLarge before the rest
// is read. Errors match ErrInvalidURL, ErrAuth, ErrNotFound, ErrTooLarge,
// ErrInvalidIndex or ErrFetch; only ErrInvalidIndex messages say what
// failed ("failed to load Helm repository from index YAML: ..."), the others
// take Flux's "failed to fetch Helm repository index: " in front.
func (c *Client) FetchIndex(ctx context.Context, prev Previous) (*Index, bool, error) {
	if c.isOCI {
		return nil, false, errorf(ErrInvalidURL, "an OCI Helm repository has no index")
	}
	u := *c.repoURL
	u.Path = path.Join(u.Path, "index.yaml")
	if u.RawPath != "" {
		u.RawPath = path.Join(u.RawPath, "index.yaml")
	}
	resp, err := c.get(ctx, u.String(), func(req *http.Request) {
		// If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2); send
		// one.
		switch {
		case prev.ETag != "":
			req.Header.Set("If-None-Match", prev.ETag)
		case prev.LastModified != "":
			req.Header.Set("If-Modified-Since", prev.LastModified)
		}
		req.Header.Set("Accept", "application/yaml, application/json, text/yaml, */*")
	})
	if err != nil {
		return nil, false, err
	}
	defer drainClose(resp.Body)
	ix := &Index{ETag: resp.Header.Get("ETag"), LastModified: strongLastModified(resp.Header)}
	if resp.StatusCode == http.StatusNotModified {
		ix.Digest = prev.Digest
		return ix, false, nil
	}
	if resp.ContentLength > c.limits.MaxIndexSize {
		return nil, false, indexTooLarge(c.limits.MaxIndexSize)
	}
	tmp, err := c.saveIndex(resp.Body, ix)
	if tmp != "" {
		defer func() { _ = os.Remove(tmp) }()
	}
	if err != nil {
		return nil, false, err
	}
	if prev.Digest != "" && ix.Digest == prev.Digest {
		return ix, false, nil
	}
	if ix.File, err = LoadIndexFile(tmp, c.limits.MaxIndexSize); err != nil {
		return nil, false, err
	}
	return ix, true, nil
}

// saveIndex copies body to a temporary file, bounded, recording its digest
// and size in ix. It returns the file's path, also on error once created.
func (c *Client) saveIndex(body io.Reader, ix *Index) (string, error) {
	f, err := os.CreateTemp("", "helm-index-*.yaml")
	if err != nil {
		return "", errorf(ErrFetch, "failed to create temporary file for the index: %w", err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(body, c.limits.MaxIndexSize+1))
	closeErr := f.Close()
	switch {
	case err != nil:
		return f.Name(), errorf(ErrFetch, "failed to read the index: %w", err)
	case n > c.limits.MaxIndexSize:
		return f.Name(), indexTooLarge(c.limits.MaxIndexSize)
	case closeErr != nil:
		return f.Name(), errorf(ErrFetch, "failed to write the index to a temporary file: %w", closeErr)
	}
	ix.Size = n
	ix.Digest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return f.Name(), nil
}

// strongLastModified returns the Last-Modified header when it can serve as
// a validator: only if the response's Date is at least a second later
// (RFC 9110 8.8.2.2). A file changed twice within its Last-Modified second
// would otherwise look unchanged for good.
func strongLastModified(h http.Header) string {
	lm, err := http.ParseTime(h.Get("Last-Modified"))
	if err != nil {
		return ""
	}
	date, err := http.ParseTime(h.Get("Date"))
	if err != nil || date.Sub(lm) < time.Second {
		return ""
	}
	return h.Get("Last-Modified")
}

func indexTooLarge(limit int64) error {
	return errorf(ErrTooLarge, "index exceeds the maximum index file size of %d bytes (--helm-index-max-size)", limit)
}

// LoadIndexFile parses an index file, YAML as served or JSON as stored in a
// HelmRepository artifact, with Helm's loader: chart versions that fail
// validation are dropped and entries sorted. A file over maxSize bytes
// (0: DefaultMaxIndexSize) is refused before it is read. Errors match
// ErrTooLarge or ErrInvalidIndex and never name the file's path.
func LoadIndexFile(file string, maxSize int64) (*repo.IndexFile, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxIndexSize
	}
	st, err := os.Lstat(file)
	if err != nil {
		return nil, errorf(ErrInvalidIndex, "failed to load Helm repository from index YAML: %w", errors.Unwrap(err))
	}
	if !st.Mode().IsRegular() {
		return nil, errorf(ErrInvalidIndex, "failed to load Helm repository from index YAML: not a regular file")
	}
	if st.Size() > maxSize {
		return nil, errorf(ErrTooLarge, "failed to load Helm repository from index YAML: index exceeds the maximum index file size of %d bytes", maxSize)
	}
	idx, err := repo.LoadIndexFile(file)
	if err != nil {
		// Helm says "error loading <path>: <cause>"; the path is a
		// temporary or storage file nobody reading the message knows.
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		return nil, errorf(ErrInvalidIndex, "failed to load Helm repository from index YAML: %w", err)
	}
	return idx, nil
}

// MarshalJSON is the index as a HelmRepository artifact holds it: indented
// JSON, as Flux stores it (loaders read it faster than YAML, and Helm's
// loader accepts either).
func MarshalJSON(idx *repo.IndexFile) ([]byte, error) {
	b, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("unable to get JSON index from chart repo: %w", err)
	}
	return b, nil
}
