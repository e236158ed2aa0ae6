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
// clock. Call it holding the object's Lock.
func (s *Storage) GarbageCollect(ctx context.Context, current meta.Artifact, records int, ttl time.Duration) ([]string, error) {
	rel, err := artifactRel(current.Path)
	if err != nil {
		return nil, err
	}
	dir, currentName := path.Dir(rel), path.Base(rel)
	f, err := s.root.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("garbage collecting %s: %w", dir, err)
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("garbage collecting %s: %w", dir, err)
	}

	now := s.opts.Now()
	type file struct {
		name string
		mod  time.Time
	}
	var candidates []file
	var garbage []string
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == currentName {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		expired := now.Sub(info.ModTime()) > ttl
		switch {
		case strings.HasPrefix(e.Name(), tempPrefix):
			if expired {
				garbage = append(garbage, e.Name())
			}
		case expired:
			garbage = append(garbage, e.Name())
		default:
			candidates = append(candidates, file{e.Name(), info.ModTime()})
		}
	}
	// Newest first; equal times fall back to the name so the choice is stable.
	slices.SortFunc(candidates, func(a, b file) int {
		if c := b.mod.Compare(a.mod); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	keep := max(records-1, 0)
	for i, c := range candidates {
		if i >= keep {
			garbage = append(garbage, c.name)
		}
	}

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
