package benchenv

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// PageCacheEnv names the environment variable that chooses how each child
// binary's file pages stand when the child starts, the same for Flux's and
// weir's:
//
//   - "evict" (the default): the binary's clean pages are dropped from the
//     page cache first (POSIX_FADV_DONTNEED), so the child faults its
//     pages in from disk as a binary that was not just written does;
//   - "copy": the binary is copied into the phase's work directory and
//     started from there, as a container runtime starts a binary it has
//     just unpacked from an image layer;
//   - "asis": started where it is, page cache untouched.
//
// It matters because the kernel maps a file's page-cache folios whole: a
// binary written a moment ago (go build, an image unpacked) sits in the
// page cache in folios of up to 2 MiB, and a process that touches one byte
// of such a folio counts all of it in its resident set (FilePmdMapped in
// smaps). The same weir-controller idle measured 146 MiB file-backed when
// just built and 87 MiB once its page cache was dropped (design 0038);
// comparing a fresh binary with one built days ago compares page caches,
// not programs.
const PageCacheEnv = "WEIR_BENCH_PAGECACHE"

// prepareBinary returns the path to start bin from, after giving its file
// pages the state PageCacheEnv asks for.
func prepareBinary(bin, work string) (string, error) {
	switch mode := os.Getenv(PageCacheEnv); mode {
	case "", "evict":
		return bin, evictPageCache(bin)
	case "copy":
		return copyBinary(bin, work)
	case "asis":
		return bin, nil
	default:
		return "", fmt.Errorf("%s=%q: want evict, copy or asis", PageCacheEnv, mode)
	}
}

// evictPageCache asks the kernel to drop the clean page-cache pages of
// path; pages a running process maps stay.
func evictPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening %s to drop its page cache: %w", path, err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("dropping %s's page cache: %w", path, err)
	}
	return nil
}

// copyBinary copies bin into work (a fresh file, written as an image's
// layer is unpacked) and returns the copy's path.
func copyBinary(bin, work string) (string, error) {
	dir, err := os.MkdirTemp(work, "bin-")
	if err != nil {
		return "", fmt.Errorf("creating a directory for %s's copy: %w", bin, err)
	}
	dst := filepath.Join(dir, filepath.Base(bin))
	src, err := os.Open(bin)
	if err != nil {
		return "", fmt.Errorf("opening %s: %w", bin, err)
	}
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return "", fmt.Errorf("creating %s: %w", dst, err)
	}
	if _, err := io.Copy(out, src); err != nil {
		out.Close()
		return "", fmt.Errorf("copying %s to %s: %w", bin, dst, err)
	}
	if err := out.Close(); err != nil {
		return "", fmt.Errorf("closing %s: %w", dst, err)
	}
	return dst, nil
}
