package sharedtree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/weir-gitops/weir/internal/source/artifact"
)

// Kept is how many extracted artifacts stay (on disk or in memory)
// once no build reads them: the newest, by first use. A fan-out's
// Kustomizations of one source build within seconds of each other; more
// would only hold disk.
const Kept = 2

// Trees shares the extracted tree of an artifact among the builds
// that read it: N Kustomizations of one source download, verify and
// extract its artifact once, not N times (a temporary directory, a
// download and a file per entry each, most of a small build's system
// time). Builds only read the tree — kustomize runs on a read-only view of
// it (internal/kustomize's confinedFS), remote bases are cloned elsewhere
// — so one tree serves concurrent builds. A digest names the content, so a
// tree never goes stale. A fetch that fails is not kept: the next build
// fetches again.
//
// A small artifact of regular files is held in memory (artifact.Tree,
// see Fetcher.FetchTree) and any other is extracted to a directory made
// for it; both kinds are shared, kept and dropped alike.
type Trees struct {
	mu    sync.Mutex
	trees map[string]*tree
	kept  []string // digests, oldest first

	inMemory, onDisk atomic.Int64 // artifacts fetched, by where they went
}

// Fetched returns how many artifacts were fetched into memory and how
// many onto disk.
func (t *Trees) Fetched() (inMemory, onDisk int64) {
	return t.inMemory.Load(), t.onDisk.Load()
}

// ErrTmpDir is a failure to make the directory a tree is extracted to:
// the controller's, not the artifact's.
var ErrTmpDir = errors.New("tmp dir error")

type tree struct {
	src   Source        // the directory is set under Trees.mu
	ready chan struct{} // closed once fetched, with err set
	err   error
	users int
	kept  bool
}

// Source is an artifact as builds read it: in memory, or extracted in a
// directory.
type Source struct {
	Dir string         // "" when in memory
	Mem *artifact.Tree // nil when on disk
}

// Stat checks that rel, a local path, names something in the artifact,
// with os.Stat's error (on disk it names the directory: the caller
// rewrites it out of messages).
func (s Source) Stat(rel string) error {
	if s.Mem != nil {
		_, err := s.Mem.Stat(path.Clean(filepath.ToSlash(rel)))
		return err
	}
	_, err := os.Stat(filepath.Join(s.Dir, rel))
	return err
}

// Fetch fetches an artifact into memory, or else into the empty
// directory mkdir makes (once at most).
type Fetch func(mkdir func() (string, error)) (*artifact.Tree, error)

// Acquire returns the artifact of digest, fetched by fetch unless another
// build did, and the function to call once the build is done with it.
// A build that joined another's fetch which failed fetches on its own:
// the other may have read another URL (a source on a server now gone, of
// the same content), and its error is not this build's.
func (t *Trees) Acquire(ctx context.Context, digest string, fetch Fetch) (Source, func(), error) {
	src, release, joined, err := t.acquire(ctx, digest, fetch)
	if err != nil && joined && ctx.Err() == nil {
		src, release, _, err = t.acquire(ctx, digest, fetch)
	}
	return src, release, err
}

// acquire is one attempt of Acquire; joined says the result was another
// build's fetch.
func (t *Trees) acquire(ctx context.Context, digest string, fetch Fetch) (_ Source, _ func(), joined bool, _ error) {
	t.mu.Lock()
	if t.trees == nil {
		t.trees = map[string]*tree{}
	}
	tr, found := t.trees[digest]
	if found {
		tr.users++
		t.mu.Unlock()
		release := func() { t.release(tr) }
		select {
		case <-tr.ready:
		case <-ctx.Done():
			release()
			return Source{}, nil, true, ctx.Err()
		}
		if tr.err != nil {
			release()
			return Source{}, nil, true, tr.err
		}
		return tr.src, release, true, nil
	}
	tr = &tree{ready: make(chan struct{}), users: 1, kept: true}
	t.trees[digest] = tr
	t.kept = append(t.kept, digest)
	t.evictLocked()
	t.mu.Unlock()

	var mem *artifact.Tree
	mem, tr.err = fetch(func() (string, error) { return t.mkdir(tr) })
	switch {
	case tr.err == nil && mem != nil:
		tr.src.Mem = mem
		t.inMemory.Add(1)
	case tr.err == nil:
		t.onDisk.Add(1)
	}
	if tr.err != nil {
		t.mu.Lock()
		t.unkeepLocked(digest, tr)
		t.mu.Unlock()
	}
	close(tr.ready)
	release := func() { t.release(tr) }
	if tr.err != nil {
		release()
		return Source{}, nil, false, tr.err
	}
	return tr.src, release, false, nil
}

// mkdir makes the directory tr is extracted to.
func (t *Trees) mkdir(tr *tree) (string, error) {
	dir, err := os.MkdirTemp("", "kustomization-")
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrTmpDir, err)
	}
	t.mu.Lock()
	tr.src.Dir = dir
	t.mu.Unlock()
	return dir, nil
}

func (t *Trees) release(tr *tree) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tr.users--
	t.removeIfUnusedLocked(tr)
}

// evictLocked stops keeping all but the newest Kept trees.
func (t *Trees) evictLocked() {
	for len(t.kept) > Kept {
		digest := t.kept[0]
		t.unkeepLocked(digest, t.trees[digest])
	}
}

// unkeepLocked stops keeping tr (and forgets it, so that the next build of
// digest fetches anew) and removes it if no build reads it.
func (t *Trees) unkeepLocked(digest string, tr *tree) {
	if i := slices.Index(t.kept, digest); i >= 0 && t.trees[digest] == tr {
		t.kept = slices.Delete(t.kept, i, i+1)
	}
	if t.trees[digest] == tr {
		delete(t.trees, digest)
	}
	tr.kept = false
	t.removeIfUnusedLocked(tr)
}

func (t *Trees) removeIfUnusedLocked(tr *tree) {
	if tr.users == 0 && !tr.kept && tr.src.Dir != "" {
		_ = os.RemoveAll(tr.src.Dir)
	}
}

// Close removes the trees kept (the controller stops); those still read
// are removed by their last build.
func (t *Trees) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.kept) > 0 {
		digest := t.kept[0]
		t.unkeepLocked(digest, t.trees[digest])
	}
}
