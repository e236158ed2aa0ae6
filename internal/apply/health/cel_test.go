package health

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

func TestProgramCache(t *testing.T) {
	c := newProgramCache(2)
	first, err := c.get(healthMode, "true")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := c.get(healthMode, "true")
	if first != again {
		t.Error("the same text compiled twice")
	}
	// The same text in the other mode is another program.
	if ready, _ := c.get(readyMode, "true"); ready == first {
		t.Error("a readyExpr shares a health program")
	}
	// Compile errors are remembered too.
	_, err1 := c.get(healthMode, "(")
	_, err2 := c.get(healthMode, "(")
	if err1 == nil || err1 != err2 { //nolint:errorlint // identity is the point: the cache must return the very same error value
		t.Errorf("compile errors %v and %v, want the same cached error", err1, err2)
	}
	if got := c.len(); got != 2 {
		t.Errorf("cache holds %d entries, want its bound 2", got)
	}
}

// TestConcurrentUse compiles and evaluates the same and different
// expressions from many goroutines; run it with -race.
func TestConcurrentUse(t *testing.T) {
	c := newProgramCache(8)
	vars := map[string]any{"status": map[string]any{"replicas": int64(3)}}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 50 {
				expr := fmt.Sprintf("status.replicas == %d", (g+i)%12)
				p, err := c.get(healthMode, expr)
				if err != nil {
					t.Error(err)
					return
				}
				got, err := p.evalBool(context.Background(), vars)
				if err != nil {
					t.Error(err)
					return
				}
				if want := (g+i)%12 == 3; got != want {
					t.Errorf("%s = %v, want %v", expr, got, want)
				}
			}
		})
	}
	wg.Wait()
	if got := c.len(); got > 8 {
		t.Errorf("cache holds %d entries, more than its bound 8", got)
	}
}
