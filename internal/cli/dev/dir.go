package dev

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/weir-gitops/weir/internal/devenv/dirlock"
)

// lockFile, in weir dev's folder, is locked by the run that owns the
// folder and holds its PID.
const lockFile = "weir-dev.lock"

// inUseError says another weir dev owns the folder.
type inUseError struct {
	dir string
	pid int // 0 when the lock file did not say
}

func (e *inUseError) Error() string {
	owner := "another weir dev"
	if e.pid != 0 {
		owner = fmt.Sprintf("another weir dev (pid %d)", e.pid)
	}
	return fmt.Sprintf("%s is running in %s: stop it first, or give this one a folder of its own with --dir <other folder>", owner, e.dir)
}

// devFiles are names weir dev leaves in its folder: one of them marks a
// folder a previous run made (the lock file is there since weir dev locks
// its folder; the others for runs before that).
var devFiles = []string{lockFile, "kubeconfig", "etcd", "weir-controller.log"}

// foreignError says dir holds files and none of them are weir dev's: it is
// not emptied, whatever it is (--dir ~, a repository, a typo).
type foreignError struct {
	dir string
}

func (e *foreignError) Error() string {
	return fmt.Sprintf("%s is not empty and holds none of weir dev's files: weir dev empties its folder, so it refuses this one; "+
		"give --dir a new or empty folder", e.dir)
}

// claimDir makes dir this run's own: it takes the folder's lock, creating
// the folder if needed, and only then empties it of a previous run's state.
// A folder another weir dev owns is left as it is: its control plane runs
// on the certificates and kubeconfig in it. A folder that holds files but
// none of weir dev's is refused and left as it is. The caller releases the
// lock once everything it started has stopped.
func claimDir(dir string) (*dirlock.Lock, error) {
	if err := refuseForeign(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	lock, err := dirlock.Acquire(filepath.Join(dir, lockFile))
	if held := (*dirlock.HeldError)(nil); errors.As(err, &held) {
		return nil, &inUseError{dir: dir, pid: held.PID}
	}
	if err != nil {
		return nil, fmt.Errorf("taking %s for weir dev: %w", dir, err)
	}
	if err := emptyDir(dir, lockFile); err != nil {
		_ = lock.Release()
		return nil, err
	}
	return lock, nil
}

// refuseForeign returns a *foreignError when dir holds entries and none of
// them is one of devFiles; nil for a folder that is missing or empty.
func refuseForeign(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	if len(entries) == 0 {
		return nil
	}
	for _, e := range entries {
		if slices.Contains(devFiles, e.Name()) {
			return nil
		}
	}
	return &foreignError{dir: dir}
}

// emptyDir removes everything in dir but keep.
func emptyDir(dir, keep string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("cleaning %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.Name() == keep {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("cleaning %s: %w", dir, err)
		}
	}
	return nil
}
