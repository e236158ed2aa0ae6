package artifact

import (
	"context"
	"sync"
)

// keyedLock is a set of mutexes created on demand per key and dropped when
// no one holds or waits for them, so it does not grow with every object
// ever seen. Waiting honours a context, which a sync.Mutex cannot.
type keyedLock struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	held chan struct{} // capacity 1: full while held
	refs int           // holders plus waiters
}

func (k *keyedLock) lock(ctx context.Context, key string) (func(), error) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyLock{held: make(chan struct{}, 1)}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()

	select {
	case l.held <- struct{}{}:
		var once sync.Once
		return func() {
			once.Do(func() {
				<-l.held
				k.release(key, l)
			})
		}, nil
	case <-ctx.Done():
		k.release(key, l)
		return nil, ctx.Err()
	}
}

func (k *keyedLock) release(key string, l *keyLock) {
	k.mu.Lock()
	defer k.mu.Unlock()
	l.refs--
	if l.refs == 0 {
		delete(k.locks, key)
	}
}
