package buildcache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/kustomize"
	"github.com/weir-gitops/weir/internal/kustomize/render"
	"github.com/weir-gitops/weir/internal/runtime/intern"
)

// DefaultObjects bounds the objects a cache holds, over all
// Kustomizations, when New is given zero.
const DefaultObjects = 100_000

// Cache keeps the last build of each Kustomization, so that a
// reconcile whose inputs have not changed — the periodic drift check, a
// dependency that became ready, a reconcile request — skips the download
// and kustomize, which for large trees costs seconds (kustomize's resource
// map is quadratic in places). The key covers everything a build reads:
// the artifact digest, the spec, the post-build variables and the options.
// Builds that load remote bases are not cached (they can change while the
// artifact does not), nor are builds with decryption (plaintext Secrets are
// not kept in memory longer than a reconcile).
type Cache struct {
	mu      sync.Mutex
	budget  int
	objects int
	entries map[types.NamespacedName]cachedBuild
	order   []types.NamespacedName // oldest first
}

// cachedBuild is a build as JSON, one document per object: a fleet's
// cache then holds a few hundred bytes per object instead of the maps of
// an unstructured object (several times that), and get decodes copies as
// it used to deep-copy them.
type cachedBuild struct {
	key      [sha256.Size]byte // of the key string: 32 bytes in place of 64 and an allocation
	objects  [][]byte
	checksum string
	files    []string
	remote   bool
}

// New returns a cache of at most budget objects: DefaultObjects when
// zero, none at all (every Get misses) when negative.
func New(budget int) *Cache {
	if budget == 0 {
		budget = DefaultObjects
	}
	return &Cache{budget: budget, entries: map[types.NamespacedName]cachedBuild{}}
}

// Get returns a copy of the cached build of name if it was made from key.
func (c *Cache) Get(name types.NamespacedName, key string) (*kustomize.Result, bool) {
	if c == nil || c.budget < 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[name]
	if !ok || e.key != sha256.Sum256([]byte(key)) {
		return nil, false
	}
	res := &kustomize.Result{Checksum: e.checksum, Files: e.files, Remote: e.remote,
		Objects: make([]*unstructured.Unstructured, len(e.objects))}
	for i, data := range e.objects {
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(data); err != nil {
			return nil, false // never stored so: build again
		}
		res.Objects[i] = o
	}
	return res, true
}

// Put stores a copy of res as the build of name from key.
func (c *Cache) Put(name types.NamespacedName, key string, res *kustomize.Result) {
	if c == nil || c.budget < 0 || res.Remote || len(res.Objects) > c.budget {
		return
	}
	// The files' paths are the same for every Kustomization of one path
	// and artifact: one copy of each.
	files := slices.Clone(res.Files)
	intern.Default.Strings(files)
	e := cachedBuild{key: sha256.Sum256([]byte(key)), objects: make([][]byte, len(res.Objects)), checksum: res.Checksum,
		files: files, remote: res.Remote}
	for i, o := range res.Objects {
		data, err := o.MarshalJSON()
		if err != nil {
			return // not cached: the next reconcile builds
		}
		e.objects[i] = data
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(name)
	c.entries[name] = e
	c.order = append(c.order, name)
	c.objects += len(res.Objects)
	for c.objects > c.budget && len(c.order) > 0 {
		c.removeLocked(c.order[0])
	}
}

// Forget drops the build of name (the Kustomization is gone).
func (c *Cache) Forget(name types.NamespacedName) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(name)
}

func (c *Cache) removeLocked(name types.NamespacedName) {
	e, ok := c.entries[name]
	if !ok {
		return
	}
	c.objects -= len(e.objects)
	delete(c.entries, name)
	if i := slices.Index(c.order, name); i >= 0 {
		c.order = slices.Delete(c.order, i, i+1)
	}
}

// Key hashes what a build reads besides the tree: the artifact digest,
// the spec, the post-build variables and the options.
func Key(digest string, spec *kustomizev1.KustomizationSpec, vars map[string]string, opts render.Options) (string, error) {
	data, err := json.Marshal(struct {
		Digest string
		Spec   *kustomizev1.KustomizationSpec
		Vars   map[string]string // json sorts map keys
		Opts   render.Options
	}{digest, spec, vars, opts})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
