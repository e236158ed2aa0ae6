// Package reqlog keeps the requests a cloud fake answered, in order, so
// that tests assert what was sent rather than only what came back. Each
// fake records its own Request type, with credentials left out.
package reqlog

import (
	"slices"
	"sync"
)

// Log is a fake's record of requests; its zero value is empty and ready.
type Log[R any] struct {
	mu   sync.Mutex
	reqs []R
}

// Add records r.
func (l *Log[R]) Add(r R) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, r)
}

// All returns the requests recorded so far, in order.
func (l *Log[R]) All() []R {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

// Count is the number of recorded requests match accepts.
func (l *Log[R]) Count(match func(R) bool) int {
	n := 0
	for _, r := range l.All() {
		if match(r) {
			n++
		}
	}
	return n
}
