package eventserver

import (
	"sync"
	"time"
)

// limiter remembers when each event key was last let through, so that a
// controller repeating itself on every reconcile does not flood chat
// channels. Entries older than the interval are swept as new keys arrive.
type limiter struct {
	interval time.Duration
	now      func() time.Time

	mu        sync.Mutex
	seen      map[string]time.Time
	lastSweep time.Time
}

func newLimiter(interval time.Duration, now func() time.Time) *limiter {
	if now == nil {
		now = time.Now
	}
	return &limiter{interval: interval, now: now, seen: map[string]time.Time{}}
}

// allow reports whether an event with key may be forwarded now, and if so
// starts a new interval for it. A zero interval allows everything.
func (l *limiter) allow(key string) bool {
	if l.interval <= 0 {
		return true
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if last, ok := l.seen[key]; ok && now.Sub(last) < l.interval {
		return false
	}
	l.seen[key] = now
	if now.Sub(l.lastSweep) >= l.interval {
		for k, t := range l.seen {
			if now.Sub(t) >= l.interval {
				delete(l.seen, k)
			}
		}
		l.lastSweep = now
	}
	return true
}

// forget drops key, so that the next event with it is let through.
func (l *limiter) forget(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.seen, key)
}
