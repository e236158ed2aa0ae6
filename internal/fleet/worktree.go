package fleet

import (
	"fmt"
	"os"
	"path/filepath"
)

// WorkTreeRoot returns the root of the Git work tree holding dir: the
// nearest of dir and its parents that holds a .git directory, or a .git
// file as linked work trees and submodules have. It is "" when there is
// none. dir's symlinks are resolved first, so the root is where the files
// are. The repository itself is not read: a work tree whose .git cannot
// be opened still has its root, which is all a spec.path needs.
func WorkTreeRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("repository %s: %w", dir, err)
	}
	d, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("repository %s: %w", dir, err)
	}
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", nil
		}
		d = parent
	}
}
