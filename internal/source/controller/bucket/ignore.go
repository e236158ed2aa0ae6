package bucket

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/weir-gitops/weir/internal/source/bucket"
)

// ignoreCache remembers, per Bucket object, the root .sourceignore last
// read and its ETag, so that an unchanged bucket is not downloaded from at
// all. It is a cache, not state: losing it (a restart) costs one GET.
// Entries go when their object is finalized; an entry is at most the
// 1 MiB bucket.ReadIgnoreFile allows.
type ignoreCache struct {
	mu sync.Mutex
	m  map[types.UID]cachedIgnore
}

type cachedIgnore struct {
	etag, text string
}

// read returns the text of obj, the .sourceignore of bucketName, from the
// cache when its ETag is the one cached for uid, else from the bucket.
func (c *ignoreCache) read(ctx context.Context, uid types.UID, cl *bucket.Client, bucketName string, obj bucket.Object) (string, error) {
	c.mu.Lock()
	e, ok := c.m[uid]
	c.mu.Unlock()
	if ok && obj.ETag != "" && e.etag == obj.ETag {
		return e.text, nil
	}
	text, err := cl.ReadIgnoreFile(ctx, bucketName, obj)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[types.UID]cachedIgnore{}
	}
	c.m[uid] = cachedIgnore{etag: obj.ETag, text: text}
	return text, nil
}

func (c *ignoreCache) forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, uid)
}
