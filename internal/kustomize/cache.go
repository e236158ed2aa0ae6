package kustomize

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// BuildCache lets builds of one Kustomization from different source trees
// share their work when what a build reads is the same in both: `weir
// diff --base` renders a repository at two revisions, and a change to one
// application should cost one build, not two of every Kustomization.
//
// A build made with a cache records what it observed of the tree: the
// content of every file it read (Result.Files), the listing of every
// directory holding one of them or named by spec.path and spec.components
// (a file added there can change the build: a generated kustomization
// lists the directory, kustomize probes for kustomization.yml). A later
// build with the same options (all of BuildOptions but Root) whose tree
// shows the same observations returns a copy of the recorded result
// instead of running kustomize. Builds that load remote bases, and failed
// builds, are not recorded.
//
// One cache serves one run of one tool: its entries hold decrypted
// content, and builds sharing it must decrypt with the same keys (the key
// covers whether a Decryptor is set, not which). The controller does not
// use it (it keeps its own cache, keyed by the artifact's digest).
type BuildCache struct {
	mu      sync.Mutex
	entries map[[32]byte][]cacheEntry

	hits, misses atomic.Int64
}

type cacheEntry struct {
	files  map[string][32]byte // root-relative path → content digest
	dirs   map[string]string   // root-relative directory → listing, "" when absent
	result *Result
}

// NewBuildCache returns an empty cache.
func NewBuildCache() *BuildCache {
	return &BuildCache{entries: map[[32]byte][]cacheEntry{}}
}

type buildCacheKey struct{}

// WithBuildCache returns a context whose builds (Build with it) use c.
// The context carries it so that callers rendering through other packages
// (internal/fleet, internal/kustomize/render) need not thread it through.
func WithBuildCache(ctx context.Context, c *BuildCache) context.Context {
	return context.WithValue(ctx, buildCacheKey{}, c)
}

func buildCacheFrom(ctx context.Context) *BuildCache {
	c, _ := ctx.Value(buildCacheKey{}).(*BuildCache)
	return c
}

// Stats returns how many builds the cache answered, and how many ran
// kustomize (built and, when they succeeded, were recorded).
func (c *BuildCache) Stats() (hits, builds int) {
	return int(c.hits.Load()), int(c.misses.Load())
}

// optionsKey digests every option but Root and Tree; ok is false when
// the options cannot be cached.
func optionsKey(opts *BuildOptions) (key [32]byte, ok bool) {
	o := *opts
	o.Root, o.Tree = "", nil
	hasDecryptor := o.Decryptor != nil
	o.Decryptor = nil
	data, err := json.Marshal(struct {
		Options   BuildOptions
		Decryptor bool
	}{o, hasDecryptor})
	if err != nil {
		return key, false
	}
	return sha256.Sum256(data), true
}

// lookup returns a copy of a recorded result whose observations the
// source of opts matches.
func (c *BuildCache) lookup(key [32]byte, opts *BuildOptions) (*Result, bool) {
	c.mu.Lock()
	entries := slices.Clone(c.entries[key])
	c.mu.Unlock()
	if len(entries) == 0 {
		return nil, false
	}
	tree, done, err := sourceFS(opts)
	if err != nil {
		return nil, false
	}
	defer done()
	for _, e := range entries {
		if e.matches(tree) {
			c.hits.Add(1)
			return e.result.DeepCopy(), true
		}
	}
	return nil, false
}

func (e *cacheEntry) matches(tree fs.FS) bool {
	for dir, listing := range e.dirs {
		if listDir(tree, dir) != listing {
			return false
		}
	}
	for f, sum := range e.files {
		data, err := fs.ReadFile(tree, f)
		if err != nil || sha256.Sum256(data) != sum {
			return false
		}
	}
	return true
}

// sourceFS is the source of a build as an fs.FS: its Tree, or its Root
// opened as an os.Root; done releases it.
func sourceFS(opts *BuildOptions) (fs.FS, func(), error) {
	if opts.Tree != nil {
		return opts.Tree, func() {}, nil
	}
	r, err := os.OpenRoot(opts.Root)
	if err != nil {
		return nil, nil, err
	}
	return r.FS(), func() { r.Close() }, nil
}

// store records res, built with opts.
func (c *BuildCache) store(key [32]byte, opts *BuildOptions, res *Result) {
	if res.Remote {
		return
	}
	tree, done, err := sourceFS(opts)
	if err != nil {
		return
	}
	defer done()
	e := cacheEntry{files: map[string][32]byte{}, dirs: map[string]string{}, result: res.DeepCopy()}
	for _, f := range res.Files {
		data, err := fs.ReadFile(tree, f)
		if err != nil {
			return
		}
		e.files[f] = sha256.Sum256(data)
		e.dirs[path.Dir(f)] = ""
	}
	spec, _ := cleanSpecPath(opts.Path)
	e.dirs[spec] = ""
	for _, comp := range opts.Components {
		e.dirs[path.Join(spec, comp)] = ""
	}
	for dir := range e.dirs {
		e.dirs[dir] = listDir(tree, dir)
	}
	c.mu.Lock()
	c.entries[key] = append(c.entries[key], e)
	c.mu.Unlock()
}

// listDir is the names and types of dir's entries, "" when it cannot be
// read.
func listDir(tree fs.FS, dir string) string {
	entries, err := fs.ReadDir(tree, dir)
	if err != nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("\x00")
	for _, e := range entries {
		b.WriteString(e.Name() + "\x00" + e.Type().String() + "\n")
	}
	return b.String()
}

// DeepCopy returns a copy of r whose objects the caller may change.
func (r *Result) DeepCopy() *Result {
	out := &Result{Checksum: r.Checksum, Files: slices.Clone(r.Files), Remote: r.Remote,
		Objects: make([]*unstructured.Unstructured, len(r.Objects))}
	for i, o := range r.Objects {
		out.Objects[i] = o.DeepCopy()
	}
	return out
}
