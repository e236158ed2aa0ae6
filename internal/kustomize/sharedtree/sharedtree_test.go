package sharedtree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-gitops/weir/internal/source/artifact"
)

func dirExists(dir string) bool {
	_, err := os.Stat(dir)
	return err == nil
}

// onDisk is a fetch that extracts to a directory, with fill.
func onDisk(fill func(dir string) error) Fetch {
	return func(mkdir func() (string, error)) (*artifact.Tree, error) {
		dir, err := mkdir()
		if err != nil {
			return nil, err
		}
		return nil, fill(dir)
	}
}

// TestArtifactTreesFetchOncePerDigest: concurrent builds of one artifact
// fetch it once and read the same tree; another digest is another tree.
func TestArtifactTreesFetchOncePerDigest(t *testing.T) {
	var trees Trees
	defer trees.Close()
	var fetches atomic.Int32
	fetch := onDisk(func(dir string) error {
		fetches.Add(1)
		return os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources: []\n"), 0o600)
	})
	var wg sync.WaitGroup
	dirs := make([]string, 10)
	for i := range dirs {
		wg.Go(func() {
			src, release, err := trees.Acquire(context.Background(), "sha256:a", fetch)
			dir := src.Dir
			if err != nil {
				t.Error(err)
				return
			}
			defer release()
			if !dirExists(filepath.Join(dir, "kustomization.yaml")) {
				t.Errorf("tree %s not fetched when acquired", dir)
			}
			dirs[i] = dir
		})
	}
	wg.Wait()
	if n := fetches.Load(); n != 1 {
		t.Errorf("%d fetches of one artifact, want 1", n)
	}
	for _, d := range dirs {
		if d != dirs[0] {
			t.Errorf("builds of one artifact read %s and %s", dirs[0], d)
		}
	}
	otherSrc, release, err := trees.Acquire(context.Background(), "sha256:b", fetch)
	if err != nil {
		t.Fatal(err)
	}
	other := otherSrc.Dir
	release()
	if other == dirs[0] || fetches.Load() != 2 {
		t.Errorf("another digest: tree %s (first %s), %d fetches", other, dirs[0], fetches.Load())
	}
}

// TestArtifactTreesEvictAndRemove: the newest Kept trees stay after
// their builds; an older one is removed once its last build is done (not
// before), a failed fetch is not kept, and close removes the rest.
func TestArtifactTreesEvictAndRemove(t *testing.T) {
	var trees Trees
	ctx := context.Background()
	ok := onDisk(func(string) error { return nil })
	firstSrc, releaseFirst, err := trees.Acquire(ctx, "sha256:1", ok)
	if err != nil {
		t.Fatal(err)
	}
	first := firstSrc.Dir
	var kept []string
	for _, d := range []string{"sha256:2", "sha256:3"} {
		src, release, err := trees.Acquire(ctx, d, ok)
		if err != nil {
			t.Fatal(err)
		}
		release()
		kept = append(kept, src.Dir)
	}
	if !dirExists(first) {
		t.Fatal("an evicted tree was removed while a build read it")
	}
	releaseFirst()
	if dirExists(first) {
		t.Error("an evicted tree outlived its last build")
	}
	for _, dir := range kept {
		if !dirExists(dir) {
			t.Errorf("kept tree %s removed", dir)
		}
	}

	failure := errors.New("artifact server down")
	var failedDir string
	if _, _, err := trees.Acquire(ctx, "sha256:4", onDisk(func(dir string) error { failedDir = dir; return failure })); !errors.Is(err, failure) {
		t.Fatalf("failed fetch: %v", err)
	}
	if dirExists(failedDir) {
		t.Error("the tree of a failed fetch was kept")
	}
	fetched := false
	if _, release, err := trees.Acquire(ctx, "sha256:4", onDisk(func(string) error { fetched = true; return nil })); err != nil || !fetched {
		t.Errorf("after a failed fetch: fetched again %v, err %v", fetched, err)
	} else {
		release()
	}

	trees.Close()
	for _, dir := range kept {
		if dirExists(dir) {
			t.Errorf("tree %s left after close", dir)
		}
	}
}

// TestArtifactTreesInMemory: an artifact held in memory is shared like a
// directory and makes none; a fetch that falls back to disk gets one.
func TestArtifactTreesInMemory(t *testing.T) {
	var trees Trees
	defer trees.Close()
	mem := &artifact.Tree{}
	var fetches atomic.Int32
	inMemory := func(func() (string, error)) (*artifact.Tree, error) { fetches.Add(1); return mem, nil }
	for range 3 {
		src, release, err := trees.Acquire(context.Background(), "sha256:m", inMemory)
		if err != nil {
			t.Fatal(err)
		}
		if src.Mem != mem || src.Dir != "" {
			t.Errorf("acquired %+v, want the tree in memory", src)
		}
		release()
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("%d fetches, want 1", n)
	}
	src, release, err := trees.Acquire(context.Background(), "sha256:d", onDisk(func(string) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	release()
	if src.Mem != nil || !dirExists(src.Dir) {
		t.Errorf("acquired %+v, want a directory", src)
	}
}

// TestArtifactTreesJoinerOfAFailedFetchFetchesItself: one build's fetch of
// a digest fails (its URL is on a server that is gone) while another build
// of the same digest waits for it; the waiter does not take that error but
// fetches with its own fetch, which works.
func TestArtifactTreesJoinerOfAFailedFetchFetchesItself(t *testing.T) {
	var trees Trees
	defer trees.Close()
	started, fail := make(chan struct{}), make(chan struct{})
	var gone Fetch = func(func() (string, error)) (*artifact.Tree, error) {
		close(started)
		<-fail
		return nil, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	}
	var own atomic.Int32
	works := onDisk(func(dir string) error {
		own.Add(1)
		return os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources: []\n"), 0o600)
	})
	firstErr := make(chan error, 1)
	go func() {
		_, _, err := trees.Acquire(context.Background(), "sha256:same", gone)
		firstErr <- err
	}()
	<-started
	joined := make(chan error, 1)
	go func() {
		src, release, err := trees.Acquire(context.Background(), "sha256:same", works)
		if err == nil {
			defer release()
			if !dirExists(filepath.Join(src.Dir, "kustomization.yaml")) {
				err = errors.New("the joiner's tree is empty")
			}
		}
		joined <- err
	}()
	time.Sleep(50 * time.Millisecond) // the joiner waits on the first fetch
	close(fail)
	if err := <-firstErr; err == nil {
		t.Error("the failing fetch reported no error")
	}
	if err := <-joined; err != nil {
		t.Errorf("the joiner got %v, want its own fetch to succeed", err)
	}
	if n := own.Load(); n != 1 {
		t.Errorf("the joiner fetched %d times, want 1", n)
	}
}
