package controllers

import (
	"bytes"
	"sync"
)

// tailLines is how much of the log Run prints when a test fails.
const tailLines = 60

// logs receives the log of every start in the process.
var logs = &tail{max: 1 << 20}

// tail keeps about the last max bytes written to it: enough to explain a
// failure without holding a long test's whole log.
type tail struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max { // trim now and then, not on every write
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// last returns the last n complete lines.
func (t *tail) last(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := bytes.TrimRight(t.buf, "\n")
	i := len(b)
	for ; n > 0 && i > 0; n-- {
		i = bytes.LastIndexByte(b[:i], '\n')
	}
	if i < 0 {
		i = 0
	}
	return string(bytes.TrimLeft(b[i:], "\n"))
}
