package testenv

import (
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// LogBuffer collects what a logger writes, at every verbosity, so that a
// test can check what was logged and what was not (a secret, a digest).
// The zero value is ready to use and safe for concurrent use.
type LogBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

// Logger returns a logger that writes into l.
func (l *LogBuffer) Logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.buf.WriteString(prefix + " " + args + "\n")
	}, funcr.Options{Verbosity: 10})
}

// String is everything logged so far, one line per entry.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
