package server

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestWatchHealth: a hub says `event: cluster` once when the API server
// stops answering, once when it answers again, nothing while nothing
// changes; a stream that joins while it is down is told at once.
func TestWatchHealth(t *testing.T) {
	old := HealthInterval
	HealthInterval = 10 * time.Millisecond
	t.Cleanup(func() { HealthInterval = old })

	var down atomic.Bool
	h := &hubs{m: map[string]*hub{}}
	b := &hub{subs: map[chan []byte]struct{}{}}
	ch := make(chan []byte, 16)
	b.subs[ch] = struct{}{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.watchHealth(ctx, b, func(context.Context) error {
		if down.Load() {
			return errors.New("connection refused")
		}
		return nil
	})

	next := func(want string) {
		t.Helper()
		select {
		case msg := <-ch:
			if !strings.Contains(string(msg), want) {
				t.Fatalf("message %q, want one with %q", msg, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no message with %q", want)
		}
	}
	time.Sleep(50 * time.Millisecond) // several checks while all is well
	if len(ch) != 0 {
		t.Fatalf("%d messages while the API server answered", len(ch))
	}
	down.Store(true)
	next(`event: cluster` + "\n" + `data: {"reachable":false,"error":"the API server does not answer: connection refused"}`)
	time.Sleep(50 * time.Millisecond)
	if len(ch) != 0 {
		t.Fatalf("%d more messages while it stayed down", len(ch))
	}
	h.mu.Lock()
	health := string(b.health)
	h.mu.Unlock()
	if !strings.Contains(health, `"reachable":false`) {
		t.Errorf("a joining stream would be told %q", health)
	}
	down.Store(false)
	next(`data: {"reachable":true}`)
}
