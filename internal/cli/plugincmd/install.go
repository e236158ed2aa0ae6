package plugincmd

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/weir-gitops/weir/internal/source/artifact"
)

// Bounds of an install: the archive downloaded, and what it unpacks to.
const (
	MaxArchiveSize int64 = 256 << 20
	MaxBinarySize  int64 = 512 << 20
)

// installer downloads, verifies and unpacks plugin archives.
type installer struct {
	http *http.Client
	now  func() time.Time
}

// install puts version v of m for platform p into dir: download (bounded),
// verify the checksum, unpack (bounded) into a scratch directory inside
// dir, rename the binary into place, write the receipt. Nothing in dir
// changes unless every step before the rename succeeded.
func (in *installer) install(ctx context.Context, dir string, m *Manifest, v *Version, p *Platform) error {
	bin, err := binName(m)
	if err != nil {
		return err
	}
	archive, err := in.download(ctx, p)
	if err != nil {
		return err
	}
	defer os.Remove(archive)

	scratch, err := os.MkdirTemp(dir, ".install-"+m.Name+"-")
	if err != nil {
		return fmt.Errorf("creating a scratch directory: %w", err)
	}
	defer os.RemoveAll(scratch)
	target := bin
	if p.ExtractPath != "" {
		target = p.ExtractPath
	}
	unpacked, err := unpack(archive, p.URL, target, scratch)
	if err != nil {
		return err
	}
	if err := os.Chmod(unpacked, 0o755); err != nil {
		return fmt.Errorf("installing plugin binary: %w", err)
	}
	if err := os.Rename(unpacked, filepath.Join(dir, bin)); err != nil {
		return fmt.Errorf("installing plugin binary: %w", err)
	}
	return writeReceipt(dir, &Receipt{Name: m.Name, Version: v.Version, Platform: *p}, in.now())
}

// binName is the file the manifest's binary is installed as: a bare name
// starting with flux- or weir-.
func binName(m *Manifest) (string, error) {
	bin := m.Bin
	if bin == "" {
		bin = fluxPrefix + m.Name
	}
	if filepath.Base(bin) != bin || strings.ContainsAny(bin, `/\`) ||
		(!strings.HasPrefix(bin, fluxPrefix) && !strings.HasPrefix(bin, weirPrefix)) {
		return "", fmt.Errorf("plugin %q has invalid bin %q: a file name starting with %s or %s", m.Name, bin, fluxPrefix, weirPrefix)
	}
	return bin, nil
}

// download fetches p.URL into a temporary file, at most MaxArchiveSize
// bytes, and checks its checksum; it returns the file's path.
func (in *installer) download(ctx context.Context, p *Platform) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return "", fmt.Errorf("failed to download plugin: %w", err)
	}
	resp, err := in.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("failed to download plugin: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("failed to download plugin: HTTP %d", resp.StatusCode)
	}
	if resp.ContentLength > MaxArchiveSize {
		return "", fmt.Errorf("plugin archive is %d bytes, more than the %d allowed", resp.ContentLength, MaxArchiveSize)
	}
	f, err := os.CreateTemp("", "weir-plugin-*")
	if err != nil {
		return "", fmt.Errorf("failed to create temp file: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			os.Remove(f.Name())
		}
	}()
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(resp.Body, MaxArchiveSize+1))
	if err != nil {
		return "", fmt.Errorf("failed to download plugin: %w", err)
	}
	if n > MaxArchiveSize {
		return "", fmt.Errorf("plugin archive is more than the %d bytes allowed", MaxArchiveSize)
	}
	if got := fmt.Sprintf("sha256:%x", h.Sum(nil)); got != p.Checksum {
		return "", fmt.Errorf("checksum verification failed (expected: %s, got: %s)", p.Checksum, got)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("failed to download plugin: %w", err)
	}
	ok = true
	return f.Name(), nil
}

// unpack extracts target from the archive at path into scratch and
// returns the extracted file; a download that is no archive is the binary
// itself.
func unpack(path, url, target, scratch string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 262)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	lower := strings.ToLower(url)
	isTar := strings.HasSuffix(lower, ".tar.gz") || strings.HasSuffix(lower, ".tgz") || strings.HasSuffix(lower, ".tar") ||
		bytes.HasPrefix(head, []byte{0x1f, 0x8b}) || (len(head) == 262 && string(head[257:262]) == "ustar")
	isZip := strings.HasSuffix(lower, ".zip") || bytes.HasPrefix(head, []byte("PK\x03\x04"))
	switch {
	case isZip:
		return unzip(path, target, scratch)
	case isTar:
		tree := filepath.Join(scratch, "tree")
		if err := artifact.Untar(f, tree, MaxBinarySize); err != nil {
			return "", fmt.Errorf("unpacking plugin archive: %w", err)
		}
		return findEntry(tree, target)
	default:
		out := filepath.Join(scratch, "bin")
		return out, copyBounded(f, out)
	}
}

// findEntry finds target in tree: the path itself when it holds a '/',
// else the first regular file of that base name.
func findEntry(tree, target string) (string, error) {
	if strings.Contains(target, "/") {
		if !filepath.IsLocal(target) {
			return "", fmt.Errorf("binary %q not found in archive", target)
		}
		p := filepath.Join(tree, filepath.FromSlash(target))
		if info, err := os.Lstat(p); err == nil && info.Mode().IsRegular() {
			return p, nil
		}
		return "", fmt.Errorf("binary %q not found in archive", target)
	}
	found := ""
	errFound := errors.New("found")
	err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && d.Name() == target {
			found = p
			return errFound
		}
		return nil
	})
	if found == "" {
		if err != nil && !errors.Is(err, errFound) {
			return "", fmt.Errorf("unpacking plugin archive: %w", err)
		}
		return "", fmt.Errorf("binary %q not found in archive", target)
	}
	return found, nil
}

// unzip extracts target from a zip archive, regular local entries only,
// at most MaxBinarySize bytes.
func unzip(path, target, scratch string) (string, error) {
	r, err := zip.OpenReader(path)
	if err != nil {
		return "", fmt.Errorf("failed to open zip: %w", err)
	}
	defer r.Close()
	for _, zf := range r.File {
		if !filepath.IsLocal(zf.Name) || !zf.FileInfo().Mode().IsRegular() {
			continue
		}
		if zf.Name != target && (strings.Contains(target, "/") || filepath.Base(zf.Name) != target) {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			return "", fmt.Errorf("failed to open %q in zip: %w", target, err)
		}
		defer rc.Close()
		out := filepath.Join(scratch, "bin")
		return out, copyBounded(rc, out)
	}
	return "", fmt.Errorf("binary %q not found in archive", target)
}

func copyBounded(r io.Reader, out string) error {
	f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return fmt.Errorf("failed to create plugin binary: %w", err)
	}
	n, err := io.Copy(f, io.LimitReader(r, MaxBinarySize+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("failed to write plugin binary: %w", err)
	}
	if n > MaxBinarySize {
		return fmt.Errorf("plugin binary is more than the %d bytes allowed", MaxBinarySize)
	}
	return nil
}
