package chart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/weir-gitops/weir/internal/source/helmrepo"
)

// Flux's defaults for the source controller's size flags, defined once in
// internal/source/helmrepo.
const (
	// DefaultMaxChartSize is --helm-chart-max-size: a chart archive's
	// bytes, as downloaded.
	DefaultMaxChartSize = helmrepo.DefaultMaxChartSize
	// DefaultMaxFileSize is --helm-chart-file-max-size: one file of a
	// chart, unpacked.
	DefaultMaxFileSize = helmrepo.DefaultMaxChartFileSize
)

// ErrTooLarge marks a chart or a chart file over its bound.
var ErrTooLarge = errors.New("exceeds size limit")

// sizeError is an ErrTooLarge with its own message.
type sizeError struct{ msg string }

func (e *sizeError) Error() string        { return e.msg }
func (e *sizeError) Is(target error) bool { return target == ErrTooLarge }

// Limits bound what is loaded into memory. Zero fields take Flux's
// defaults; negative ones are unbounded.
type Limits struct {
	MaxChartSize int64
	MaxFileSize  int64
}

func (l Limits) chartSize() int64 { return orDefault(l.MaxChartSize, DefaultMaxChartSize) }
func (l Limits) fileSize() int64  { return orDefault(l.MaxFileSize, DefaultMaxFileSize) }

func orDefault(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}

// ReadArchive reads a chart archive from r, failing with ErrTooLarge
// beyond the chart bound; name is for the message.
func ReadArchive(r io.Reader, name string, l Limits) ([]byte, error) {
	limit := l.chartSize()
	if limit < 0 {
		return io.ReadAll(r)
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading chart '%s': %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(name, limit)
	}
	return data, nil
}

// ReadArchiveFile reads the chart archive at p within the chart bound,
// checking its size before reading.
func ReadArchiveFile(p string, l Limits) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("chart '%s' is not a regular file", filepath.Base(p))
	}
	if limit := l.chartSize(); limit >= 0 && fi.Size() > limit {
		return nil, tooLarge(filepath.Base(p), limit)
	}
	return ReadArchive(f, filepath.Base(p), l)
}

// LoadArchive loads a chart from archive bytes, after checking every
// entry's size against the file bound. Helm's loader refuses absolute and
// climbing names.
func LoadArchive(data []byte, l Limits) (*chartv2.Chart, error) {
	if limit := l.chartSize(); limit >= 0 && int64(len(data)) > limit {
		return nil, tooLarge("archive", limit)
	}
	if err := checkEntrySizes(data, l.fileSize()); err != nil {
		return nil, err
	}
	ch, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("failed to load chart archive: %w", err)
	}
	return ch, nil
}

// checkEntrySizes reads the archive's headers and fails on the first file
// over limit, before Helm unpacks any of it into memory.
func checkEntrySizes(data []byte, limit int64) error {
	if limit < 0 {
		return nil
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("failed to load chart archive: %w", err)
	}
	defer func() { _ = gz.Close() }()
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("failed to load chart archive: %w", err)
		}
		if hdr.Size > limit {
			return fileTooLarge(hdr.Name, hdr.Size, limit)
		}
	}
}

func tooLarge(name string, limit int64) error {
	return &sizeError{msg: fmt.Sprintf("size of chart '%s' exceeds '%d' bytes limit", name, limit)}
}

func fileTooLarge(name string, size, limit int64) error {
	return &sizeError{msg: fmt.Sprintf("cannot load file %s as file size (%d) exceeds limit (%d)", name, size, limit)}
}
