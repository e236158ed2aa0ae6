package auth

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// clock is a settable now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestCacheKeepsTokensUntilFourFifthsOfTheirLife(t *testing.T) {
	start := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		lifetime    time.Duration // zero: the token says no expiry
		maxDuration time.Duration
		after       time.Duration
		wantFetches int
	}{
		{"fresh token reused", time.Hour, time.Hour, 47 * time.Minute, 1},
		{"past four fifths of its life", time.Hour, time.Hour, 48 * time.Minute, 2},
		{"max duration shorter than the life", 12 * time.Hour, time.Hour, 61 * time.Minute, 2},
		{"no expiry: max duration bounds it", 0, 10 * time.Minute, 9 * time.Minute, 1},
		{"no expiry: past max duration", 0, 10 * time.Minute, 10 * time.Minute, 2},
		{"max duration above one hour is capped", 12 * time.Hour, 3 * time.Hour, 61 * time.Minute, 2},
		{"capped max duration: within the hour", 12 * time.Hour, 3 * time.Hour, 59 * time.Minute, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &clock{t: start}
			c := NewCache(10, tt.maxDuration)
			c.now = clk.now
			fetches := 0
			fetch := func(context.Context) (Token, error) {
				fetches++
				tok := Token{Value: "t"}
				if tt.lifetime > 0 {
					tok.ExpiresAt = clk.t.Add(tt.lifetime)
				}
				return tok, nil
			}
			for _, at := range []time.Duration{0, tt.after} {
				clk.t = start.Add(at)
				if _, err := c.Get(context.Background(), "k", fetch); err != nil {
					t.Fatal(err)
				}
			}
			if fetches != tt.wantFetches {
				t.Errorf("fetches = %d, want %d", fetches, tt.wantFetches)
			}
		})
	}
}

func TestCacheEvictsLeastRecentlyUsedAndForgets(t *testing.T) {
	c := NewCache(2, time.Hour)
	fetched := map[string]int{}
	get := func(key string) {
		t.Helper()
		if _, err := c.Get(context.Background(), key, func(context.Context) (Token, error) {
			fetched[key]++
			return Token{Value: key, ExpiresAt: time.Now().Add(time.Hour)}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	get("a")
	get("b")
	get("a") // a is now the most recently used
	get("c") // b leaves
	get("a")
	get("b")
	if fetched["a"] != 1 || fetched["b"] != 2 || fetched["c"] != 1 {
		t.Errorf("fetches = %v, want a:1 b:2 c:1", fetched)
	}
	c.Forget("b")
	get("b")
	if fetched["b"] != 3 {
		t.Errorf("after Forget, b fetched %d times, want 3", fetched["b"])
	}
	if c.Len() != 2 {
		t.Errorf("Len = %d, want 2", c.Len())
	}
	// ForgetToken drops b only while b's token is the one refused: a
	// second caller refused the same token keeps the first's new one.
	c.ForgetToken("b", "not b's token")
	get("b")
	c.ForgetToken("b", "b")
	get("b")
	c.ForgetToken("b", "b-old")
	get("b")
	if fetched["b"] != 4 {
		t.Errorf("after ForgetToken, b fetched %d times, want 4", fetched["b"])
	}
}

func TestCacheMakesOneExchangePerKeyAtATime(t *testing.T) {
	c := NewCache(10, time.Hour)
	var calls atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, err := c.Get(context.Background(), "k", func(context.Context) (Token, error) {
				calls.Add(1)
				<-release
				return Token{Value: "v", ExpiresAt: time.Now().Add(time.Hour)}, nil
			})
			if err != nil || tok.Value != "v" {
				t.Errorf("Get = %v, %v", tok, err)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("exchanges = %d, want 1", n)
	}
}

func TestCacheKeepsNoFailureAndNilCacheFetchesEveryTime(t *testing.T) {
	c := NewCache(10, time.Hour)
	boom := errors.New("boom")
	if _, err := c.Get(context.Background(), "k", func(context.Context) (Token, error) { return Token{}, boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if c.Len() != 0 {
		t.Errorf("a failure was kept")
	}
	var none *Cache
	if NewCache(0, time.Hour) != nil {
		t.Error("NewCache(0) should disable the cache")
	}
	n := 0
	for range 2 {
		_, _ = none.Get(context.Background(), "k", func(context.Context) (Token, error) { n++; return Token{}, nil })
	}
	if n != 2 {
		t.Errorf("nil cache fetched %d times, want 2", n)
	}
}

func TestTokenPrintsNoSecret(t *testing.T) {
	tok := Token{Username: "AWS", Value: "s3cr3t", ExpiresAt: time.Unix(0, 0)}
	for _, s := range []string{tok.String(), tok.GoString()} {
		if s == "" || contains(s, "s3cr3t") {
			t.Errorf("%q shows the token", s)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
