//go:build !unix

package artifact

import (
	"io"
	"io/fs"
	"os"
)

// listDir reads the entries of a directory opened through an os.Root.
func listDir(f *os.File) ([]fs.DirEntry, error) { return f.ReadDir(-1) }

// openRegularAt has no fast path here; callers fall back to os.Root.
func openRegularAt(*os.File, string) (io.ReadCloser, fileMeta, error) {
	return nil, fileMeta{}, errUnsupported
}
