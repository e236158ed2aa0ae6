package auth

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"k8s.io/utils/lru"
)

// Cache keeps tokens by key. A token is reused until four fifths of the
// lifetime it had when it was fetched have passed (so a caller never gets
// one about to expire) and never longer than the cache's maximum duration;
// when the cache is full the least recently used token leaves. Concurrent
// Gets of one key make one exchange. A nil *Cache keeps nothing.
//
// The key must name everything the token depends on: the cloud, the
// identity (Identity.String), the scope or registry, and the
// ServiceAccount's annotations that pick the cloud identity, so that
// changing a role ARN is a new key.
type Cache struct {
	maxDuration time.Duration
	now         func() time.Time

	mu      sync.Mutex
	entries *lru.Cache
	flight  singleflight.Group
}

type cached struct {
	token   Token
	staleAt time.Time
}

// MaxTokenDuration caps the cache's maximum duration, as Flux caps
// --token-cache-max-duration: a longer value keeps tokens one hour.
const MaxTokenDuration = time.Hour

// NewCache returns a cache of at most maxSize tokens, each kept at most
// maxDuration, itself at most MaxTokenDuration (Flux's defaults: 100 and
// one hour). maxSize 0 disables it: it returns nil.
func NewCache(maxSize int, maxDuration time.Duration) *Cache {
	if maxSize <= 0 {
		return nil
	}
	maxDuration = min(maxDuration, MaxTokenDuration)
	return &Cache{maxDuration: maxDuration, now: time.Now, entries: lru.New(maxSize)}
}

// Get returns the cached token of key, or fetches, keeps and returns one.
func (c *Cache) Get(ctx context.Context, key string, fetch func(context.Context) (Token, error)) (Token, error) {
	if c == nil {
		return fetch(ctx)
	}
	if t, ok := c.lookup(key); ok {
		return t, nil
	}
	v, err, _ := c.flight.Do(key, func() (any, error) {
		if t, ok := c.lookup(key); ok {
			return t, nil
		}
		t, err := fetch(ctx)
		if err != nil {
			return Token{}, err
		}
		c.store(key, t)
		return t, nil
	})
	if err != nil {
		return Token{}, err
	}
	return v.(Token), nil
}

// Forget drops key's token: a caller whose token was refused (HTTP 401)
// exchanges again on its next Get.
func (c *Cache) Forget(key string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries.Remove(key)
}

// ForgetToken drops key's token if it is still value: of callers refused
// one token at the same time, the first exchanges again and the others
// get its new token instead of exchanging too.
func (c *Cache) ForgetToken(key, value string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.entries.Get(key); ok && v.(cached).token.Value == value {
		c.entries.Remove(key)
	}
}

// Len is the number of tokens kept.
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.Len()
}

func (c *Cache) lookup(key string) (Token, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.entries.Get(key)
	if !ok {
		return Token{}, false
	}
	e := v.(cached)
	if !c.now().Before(e.staleAt) {
		c.entries.Remove(key)
		return Token{}, false
	}
	return e.token, true
}

func (c *Cache) store(key string, t Token) {
	now := c.now()
	staleAt := now.Add(c.maxDuration)
	if !t.ExpiresAt.IsZero() {
		if byExpiry := now.Add(t.ExpiresAt.Sub(now) * 4 / 5); byExpiry.Before(staleAt) {
			staleAt = byExpiry
		}
	}
	if !staleAt.After(now) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries.Add(key, cached{token: t, staleAt: staleAt})
}
