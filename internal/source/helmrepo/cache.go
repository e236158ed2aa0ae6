package helmrepo

import (
	"context"
	"time"

	repo "helm.sh/helm/v4/pkg/repo/v1"
	"k8s.io/apimachinery/pkg/util/cache"
)

// Flux's defaults for the index cache flags.
const (
	// DefaultCacheTTL is --helm-cache-ttl.
	DefaultCacheTTL = 15 * time.Minute
	// DefaultCachePurgeInterval is --helm-cache-purge-interval.
	DefaultCachePurgeInterval = time.Minute
)

// CacheOptions are the --helm-cache-* flags.
type CacheOptions struct {
	// MaxSize is how many parsed indexes are kept; 0 (Flux's default)
	// disables the cache.
	MaxSize int
	// TTL is how long an index stays after it was last stored or read.
	TTL time.Duration
	// PurgeInterval is how often expired indexes are dropped.
	PurgeInterval time.Duration
}

// Cache keeps parsed indexes in memory, so that HelmCharts resolve chart
// versions without parsing their repository's index again. Keys are
// artifact paths (helmrepository/<namespace>/<name>/index-<digest>.yaml):
// a key names one namespace's repository and one index content, so a
// HelmChart can only read an index it could download, and a new index is
// a new key. When full, the least recently used index goes. A nil *Cache
// is a disabled one: Get misses and Set does nothing.
//
// The cached *repo.IndexFile is shared: callers must not modify it.
type Cache struct {
	lru  *cache.LRUExpireCache
	opts CacheOptions
}

// NewCache returns a cache with opts, or nil (disabled) when opts.MaxSize
// is 0 or less.
func NewCache(opts CacheOptions) *Cache {
	if opts.MaxSize <= 0 {
		return nil
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultCacheTTL
	}
	if opts.PurgeInterval <= 0 {
		opts.PurgeInterval = DefaultCachePurgeInterval
	}
	return &Cache{lru: cache.NewLRUExpireCache(opts.MaxSize), opts: opts}
}

// Get returns the index stored under key and extends its TTL.
func (c *Cache) Get(key string) (*repo.IndexFile, bool) {
	if c == nil {
		return nil, false
	}
	v, ok := c.lru.Get(key)
	if !ok {
		return nil, false
	}
	idx := v.(*repo.IndexFile)
	c.lru.Add(key, idx, c.opts.TTL)
	return idx, true
}

// Set stores idx under key for the TTL.
func (c *Cache) Set(key string, idx *repo.IndexFile) {
	if c == nil || idx == nil {
		return
	}
	c.lru.Add(key, idx, c.opts.TTL)
}

// Load returns the index stored under key, or parses file (a stored
// HelmRepository artifact; see LoadIndexFile) and caches it under key. hit
// reports whether the cache answered. A disabled cache always parses.
func (c *Cache) Load(key, file string, maxSize int64) (idx *repo.IndexFile, hit bool, err error) {
	if idx, ok := c.Get(key); ok {
		return idx, true, nil
	}
	if idx, err = LoadIndexFile(file, maxSize); err != nil {
		return nil, false, err
	}
	c.Set(key, idx)
	return idx, false, nil
}

// Touch extends the TTL of key's index, if cached: a HelmRepository whose
// index is unchanged keeps it warm for its HelmCharts.
func (c *Cache) Touch(key string) {
	if c == nil {
		return
	}
	if v, ok := c.lru.Get(key); ok {
		c.lru.Add(key, v, c.opts.TTL)
	}
}

// Remove drops key's index.
func (c *Cache) Remove(key string) {
	if c == nil {
		return
	}
	c.lru.Remove(key)
}

// Len is how many unexpired indexes the cache holds.
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	return len(c.lru.Keys())
}

// Purge drops every expired index now. Expired indexes are never returned,
// but they hold memory until purged or pushed out.
func (c *Cache) Purge() {
	if c == nil {
		return
	}
	live := map[any]bool{}
	for _, k := range c.lru.Keys() {
		live[k] = true
	}
	c.lru.RemoveAll(func(k any) bool { return !live[k] })
}

// Start purges every PurgeInterval until ctx ends; it is a manager
// Runnable, and returns at once for a disabled cache.
func (c *Cache) Start(ctx context.Context) error {
	if c == nil {
		return nil
	}
	t := time.NewTicker(c.opts.PurgeInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			c.Purge()
		}
	}
}

// NeedLeaderElection is false: every replica reads its own cache.
func (c *Cache) NeedLeaderElection() bool { return false }
