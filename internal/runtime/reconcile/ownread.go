package reconcile

import "context"

type ownReadKey struct{}

// OwnRead marks ctx as the read of the object a reconcile is for, as Run
// makes it. A sharded manager's client answers other reads the cache
// misses from the API server (references to another shard's objects), but
// not this one: an object that left the shard is no longer reconciled by it.
func OwnRead(ctx context.Context) context.Context {
	return context.WithValue(ctx, ownReadKey{}, true)
}

// IsOwnRead reports whether ctx was marked by OwnRead.
func IsOwnRead(ctx context.Context) bool {
	own, _ := ctx.Value(ownReadKey{}).(bool)
	return own
}
