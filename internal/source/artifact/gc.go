package artifact

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/weir-gitops/weir/api/meta"
)

// GarbageCollect deletes the files of current's object that are no longer
// worth keeping and returns their paths relative to the storage root. It
// follows Flux's retention rules (--artifact-retention-records and
// --artifact-retention-ttl):
//
//   - current is never deleted;
//   - any other file older than ttl is deleted;
//   - of the rest, only the newest records-1 are kept, so that at most
//     records files remain, current included.
//
// Temporary files left by an interrupted write are deleted once older than
// ttl. Age is measured from each file's modification time to the storage
// clock. Directories and links in the object's directory are left alone.
// Call it holding the object's Lock.
func (s *Storage) GarbageCollect(ctx context.Context, current meta.Artifact, records int, ttl time.Duration) ([]string, error) {
	rel, err := artifactRel(current.Path)
	if err != nil {
		return nil, err
	}
	dir := path.Dir(rel)
	files, err := s.listFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("garbage collecting %s: %w", dir, err)
	}
	garbage := chooseGarbage(files, path.Base(rel), s.opts.Now(), records, ttl)

	var deleted []string
	var errs []error
	for _, name := range garbage {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		p := dir + "/" + name
		if err := s.root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing %s: %w", p, err))
			continue
		}
		deleted = append(deleted, p)
	}
	slices.Sort(deleted)
	return deleted, errors.Join(errs...)
}

// storedFile is a regular file in an object's directory.
type storedFile struct {
	name string
	mod  time.Time
}

// listFiles lists the regular files of dir; a missing dir has none.
func (s *Storage) listFiles(dir string) ([]storedFile, error) {
	f, err := s.root.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1) // through the Root: Info is already loaded
	if err != nil {
		return nil, err
	}
	var files []storedFile
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		files = append(files, storedFile{e.Name(), info.ModTime()})
	}
	return files, nil
}

// chooseGarbage applies the retention rules to the files of one object.
func chooseGarbage(files []storedFile, current string, now time.Time, records int, ttl time.Duration) []string {
	var garbage []string
	var fresh []storedFile
	for _, f := range files {
		switch {
		case f.name == current:
		case now.Sub(f.mod) > ttl:
			garbage = append(garbage, f.name)
		case strings.HasPrefix(f.name, tempPrefix):
			// A write in progress, or one that has not yet been given up.
		default:
			fresh = append(fresh, f)
		}
	}
	// Newest first; equal times fall back to the name so the choice is stable.
	slices.SortFunc(fresh, func(a, b storedFile) int {
		if c := b.mod.Compare(a.mod); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	if keep := max(records-1, 0); len(fresh) > keep {
		for _, f := range fresh[keep:] {
			garbage = append(garbage, f.name)
		}
	}
	return garbage
}
