package dirlock

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// HeldError says the lock is held by another holder; PID is what the holder
// wrote into the lock file, 0 when it could not be read.
type HeldError struct {
	Path string
	PID  int
}

func (e *HeldError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("%s is held by another process", e.Path)
	}
	return fmt.Sprintf("%s is held by process %d", e.Path, e.PID)
}

// Lock is a held lock. Release gives it up.
type Lock struct {
	path string
	file *os.File
}

// Acquire takes the lock file at path without waiting, creating the file if
// needed, and writes the calling process's PID into it. If another holder
// has it, the error is a *HeldError naming that holder's PID. A file left
// by a holder that is gone is taken over.
func Acquire(path string) (*Lock, error) {
	// A holder removes the file as it releases; one who opened it just
	// before then locks a file that no longer has this name. Such a lock
	// excludes no one, so it is dropped and taken again on the new file.
	for range 10 {
		l, err := tryAcquire(path)
		if !errors.Is(err, errUnlinked) {
			return l, err
		}
	}
	return nil, fmt.Errorf("locking %s: the file keeps being replaced", path)
}

var errUnlinked = errors.New("lock file replaced while locking it")

func tryAcquire(path string) (*Lock, error) {
	// os.OpenFile opens close-on-exec: children do not inherit the lock.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening lock file: %w", err)
	}
	if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &HeldError{Path: path, PID: readPID(path)}
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if same, err := samePath(f, path); err != nil || !same {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, errUnlinked
	}
	if err := writePID(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing lock file %s: %w", path, err)
	}
	return &Lock{path: path, file: f}, nil
}

// Release removes the lock file and gives up the lock, in that order: once
// the lock is free, the name already leads to a new file, so no later
// holder can be left holding an unlinked one. It is safe to call twice.
func (l *Lock) Release() error {
	if l == nil || l.file == nil {
		return nil
	}
	errRemove := os.Remove(l.path)
	if errors.Is(errRemove, os.ErrNotExist) {
		errRemove = nil
	}
	errClose := l.file.Close()
	l.file = nil
	if err := errors.Join(errRemove, errClose); err != nil {
		return fmt.Errorf("releasing lock %s: %w", l.path, err)
	}
	return nil
}

// Path is the lock file.
func (l *Lock) Path() string { return l.path }

func flock(f *os.File, how int) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errLock error
	if err := raw.Control(func(fd uintptr) {
		for {
			if errLock = unix.Flock(int(fd), how); !errors.Is(errLock, unix.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	return errLock
}

// samePath reports whether the locked file is still the one named path.
func samePath(f *os.File, path string) (bool, error) {
	held, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("reading lock file: %w", err)
	}
	named, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading lock file: %w", err)
	}
	return os.SameFile(held, named), nil
}

func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// readPID reads the holder's PID. A holder writes it just after locking,
// so an empty file is read again for a moment before giving up.
func readPID(path string) int {
	for range 20 {
		data, err := os.ReadFile(path)
		if err != nil {
			return 0
		}
		if pid, err := strconv.Atoi(string(bytes.TrimSpace(data))); err == nil && pid > 0 {
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	return 0
}
