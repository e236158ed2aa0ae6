package kustomization

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
)

// keptTrees is how many extracted artifacts stay on disk once no build
// reads them: the newest, by first use. A fan-out's Kustomizations of one
// source build within seconds of each other; more would only hold disk.
const keptTrees = 2

// artifactTrees shares the extracted tree of an artifact among the builds
// that read it: N Kustomizations of one source download, verify and
// extract its artifact once, not N times (a temporary directory, a
// download and a file per entry each, most of a small build's system
// time). Builds only read the tree — kustomize runs on a read-only view of
// it (internal/kustomize's confinedFS), remote bases are cloned elsewhere
// — so one tree serves concurrent builds. A digest names the content, so a
// tree never goes stale. A fetch that fails is not kept: the next build
// fetches again.
type artifactTrees struct {
	mu    sync.Mutex
	trees map[string]*tree
	kept  []string // digests, oldest first
}

// errTmpDir is a failure to make the directory a tree is extracted to:
// the controller's, not the artifact's.
var errTmpDir = errors.New("tmp dir error")

type tree struct {
	dir   string
	ready chan struct{} // closed once fetched, with err set
	err   error
	users int
	kept  bool
}

// acquire returns the directory holding the artifact of digest, fetched
// into an empty directory by fetch unless another build did, and the
// function to call once the build is done with it.
func (t *artifactTrees) acquire(ctx context.Context, digest string, fetch func(dir string) error) (string, func(), error) {
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
			return "", nil, ctx.Err()
		}
		if tr.err != nil {
			release()
			return "", nil, tr.err
		}
		return tr.dir, release, nil
	}
	dir, err := os.MkdirTemp("", "kustomization-")
	if err != nil {
		t.mu.Unlock()
		return "", nil, fmt.Errorf("%w: %w", errTmpDir, err)
	}
	tr = &tree{dir: dir, ready: make(chan struct{}), users: 1, kept: true}
	t.trees[digest] = tr
	t.kept = append(t.kept, digest)
	t.evictLocked()
	t.mu.Unlock()

	tr.err = fetch(dir)
	if tr.err != nil {
		t.mu.Lock()
		t.unkeepLocked(digest, tr)
		t.mu.Unlock()
	}
	close(tr.ready)
	release := func() { t.release(tr) }
	if tr.err != nil {
		release()
		return "", nil, tr.err
	}
	return dir, release, nil
}

func (t *artifactTrees) release(tr *tree) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tr.users--
	t.removeIfUnusedLocked(tr)
}

// evictLocked stops keeping all but the newest keptTrees trees.
func (t *artifactTrees) evictLocked() {
	for len(t.kept) > keptTrees {
		digest := t.kept[0]
		t.unkeepLocked(digest, t.trees[digest])
	}
}

// unkeepLocked stops keeping tr (and forgets it, so that the next build of
// digest fetches anew) and removes it if no build reads it.
func (t *artifactTrees) unkeepLocked(digest string, tr *tree) {
	if i := slices.Index(t.kept, digest); i >= 0 && t.trees[digest] == tr {
		t.kept = slices.Delete(t.kept, i, i+1)
	}
	if t.trees[digest] == tr {
		delete(t.trees, digest)
	}
	tr.kept = false
	t.removeIfUnusedLocked(tr)
}

func (t *artifactTrees) removeIfUnusedLocked(tr *tree) {
	if tr.users == 0 && !tr.kept {
		_ = os.RemoveAll(tr.dir)
	}
}

// close removes the trees kept (the controller stops); those still read
// are removed by their last build.
func (t *artifactTrees) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.kept) > 0 {
		digest := t.kept[0]
		t.unkeepLocked(digest, t.trees[digest])
	}
}
