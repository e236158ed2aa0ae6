package artifact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// ErrArtifactNotFound marks an artifact URL the server answered 404 for:
// the source controller has garbage-collected it, or not written it yet.
// A consumer waits for the source's next status rather than failing.
var ErrArtifactNotFound = errors.New("artifact not found")

// DefaultMaxDownloadSize bounds a download when Fetcher.MaxDownloadSize is 0.
const DefaultMaxDownloadSize int64 = 512 << 20

// Fetcher downloads artifacts the way downstream controllers consume them:
// over HTTP from the source controller's file server, into a temporary file,
// verified against the advertised digest before anything is extracted.
type Fetcher struct {
	// Client does the HTTP requests; a client with a 2-minute timeout when
	// nil.
	Client *http.Client
	// Retries is how many times a failed request (not a 404, not a digest
	// mismatch) is retried, with a short linear backoff (--http-retry).
	Retries int
	// MaxDownloadSize bounds the compressed download; 0 means
	// DefaultMaxDownloadSize, negative unbounded.
	MaxDownloadSize int64
	// MaxUntarSize bounds the extracted size; see Untar.
	MaxUntarSize int64
	// MaxMemoryTree bounds what FetchTree holds in memory (ReadTree's
	// budget); 0 means DefaultMaxMemoryTree, negative always extracts to
	// disk.
	MaxMemoryTree int64
	// TempDir holds the downloaded file until it is extracted; os.TempDir
	// when empty.
	TempDir string
}

// Fetch downloads url, checks its digest ("<algorithm>:<hex>") and extracts
// it into dir. Nothing is extracted unless the whole file arrived within the
// size bound and matched the digest.
func (f *Fetcher) Fetch(ctx context.Context, url, digest, dir string) error {
	tmp, done, err := f.verified(ctx, url, digest)
	if err != nil {
		return err
	}
	defer done()
	if err := Untar(tmp, dir, f.MaxUntarSize); err != nil {
		return fmt.Errorf("failed to extract artifact %s: %w", url, err)
	}
	return nil
}

// FetchTree is Fetch into memory: it downloads and verifies url as Fetch
// does, then reads it with ReadTree within MaxMemoryTree. An artifact
// that does not fit (ErrNeedsDisk: a link, or too large) is extracted
// into the directory mkdir makes, as Fetch does. On success exactly one
// of the tree and the directory is set.
func (f *Fetcher) FetchTree(ctx context.Context, url, digest string, mkdir func() (string, error)) (*Tree, string, error) {
	tmp, done, err := f.verified(ctx, url, digest)
	if err != nil {
		return nil, "", err
	}
	defer done()
	if f.MaxMemoryTree >= 0 {
		tree, err := ReadTree(tmp, f.MaxUntarSize, f.MaxMemoryTree)
		if err == nil {
			return tree, "", nil
		}
		if !errors.Is(err, ErrNeedsDisk) {
			return nil, "", fmt.Errorf("failed to extract artifact %s: %w", url, err)
		}
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return nil, "", err
		}
	}
	dir, err := mkdir()
	if err != nil {
		return nil, "", err
	}
	if err := Untar(tmp, dir, f.MaxUntarSize); err != nil {
		return nil, dir, fmt.Errorf("failed to extract artifact %s: %w", url, err)
	}
	return nil, dir, nil
}

// verified downloads url into a temporary file and checks its digest; it
// returns the file, read from the start, and the function removing it.
func (f *Fetcher) verified(ctx context.Context, url, digest string) (*os.File, func(), error) {
	alg, _, err := ParseDigest(digest)
	if err != nil {
		return nil, nil, fmt.Errorf("artifact %s: %w", url, err)
	}
	tmp, err := os.CreateTemp(f.TempDir, "artifact-*.tar.gz")
	if err != nil {
		return nil, nil, fmt.Errorf("creating download file: %w", err)
	}
	done := func() {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
	}
	if err := f.downloadVerified(ctx, url, digest, alg, tmp); err != nil {
		done()
		return nil, nil, err
	}
	return tmp, done, nil
}

func (f *Fetcher) downloadVerified(ctx context.Context, url, digest string, alg Algorithm, tmp *os.File) error {
	var lastErr error
	for attempt := 0; attempt <= max(f.Retries, 0); attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(attempt) * 500 * time.Millisecond):
			}
		}
		lastErr = f.download(ctx, url, tmp)
		if lastErr == nil || errors.Is(lastErr, ErrArtifactNotFound) || errors.Is(lastErr, ErrArchiveTooLarge) {
			break
		}
	}
	if lastErr != nil {
		return lastErr
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	got, err := Digest(alg, tmp)
	if err != nil {
		return err
	}
	if got != digest {
		return fmt.Errorf("failed to verify artifact %s: %w: computed '%s', expected '%s'", url, ErrDigestMismatch, got, digest)
	}
	_, err = tmp.Seek(0, io.SeekStart)
	return err
}

func (f *Fetcher) download(ctx context.Context, url string, dst *os.File) error {
	if err := dst.Truncate(0); err != nil {
		return err
	}
	if _, err := dst.Seek(0, io.SeekStart); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("failed to create request for %s: %w", url, err)
	}
	client := f.Client
	if client == nil {
		client = &http.Client{Timeout: 2 * time.Minute}
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("failed to download artifact from %s: %w", url, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s: %w", url, ErrArtifactNotFound)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("failed to download artifact from %s, status: %s", url, resp.Status)
	}
	limit := f.MaxDownloadSize
	if limit == 0 {
		limit = DefaultMaxDownloadSize
	}
	var body io.Reader = resp.Body
	if limit > 0 {
		body = io.LimitReader(resp.Body, limit+1)
	}
	n, err := io.Copy(dst, body)
	if err != nil {
		return fmt.Errorf("failed to download artifact from %s: %w", url, err)
	}
	if limit > 0 && n > limit {
		return fmt.Errorf("artifact %s is larger than %d bytes: %w", url, limit, ErrArchiveTooLarge)
	}
	return nil
}
