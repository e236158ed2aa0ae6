package shard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func startMember(t *testing.T, cs *fake.Clientset, id string) *Member {
	t.Helper()
	m, err := NewMember(Config{
		Client: cs, Namespace: "weir-system", Group: "weir-all", Identity: id,
		LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, Log: logr.Discard(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("member %s: %v", id, err)
		}
	})
	return m
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting until %s", what)
}

// keyMovingTo is a key a owns alone and b owns once it joins.
func keyMovingTo(a, b string) string {
	for i := 0; ; i++ {
		if k := fmt.Sprintf("ns/ks-%d", i); Owner(k, []string{a, b}) == b {
			return k
		}
	}
}

// TestHandOverWaitsForTheOldOwner: a member joining gets its share only
// once the old owner drained it: while a's reconcile of the key runs, b
// does not start one, and a starts no new one once b is seen.
func TestHandOverWaitsForTheOldOwner(t *testing.T) {
	cs := fake.NewClientset()
	a := startMember(t, cs, "a")
	key := keyMovingTo("a", "b")
	eventually(t, "a admits the key alone", func() bool {
		ok, _ := a.admit("ks", key)
		return ok
	})
	b := startMember(t, cs, "b")
	eventually(t, "b sees both members", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.view.Members) == 2
	})
	eventually(t, "a sees both members", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return len(a.view.Members) == 2
	})
	for range 10 {
		if ok, owned := b.admit("ks", key); ok || !owned {
			t.Fatalf("b admitted %v (owns it: %v) while a's reconcile of it runs", ok, owned)
		}
		if ok, _ := a.admit("ks", key); ok {
			t.Fatal("a admitted a key it no longer owns")
		}
		time.Sleep(100 * time.Millisecond)
	}
	a.done("ks", key)
	eventually(t, "b admits the key once a drained it", func() bool {
		ok, _ := b.admit("ks", key)
		return ok
	})
	b.done("ks", key)
}

// TestFenceRefusesWritesPastTheRenewDeadline: a member whose last
// successful renewal started more than the renew deadline ago sends no
// write; reads pass.
func TestFenceRefusesWritesPastTheRenewDeadline(t *testing.T) {
	cs := fake.NewClientset()
	var unreachable atomic.Bool
	cs.PrependReactor("*", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
		v := action.GetVerb()
		if !unreachable.Load() || v == "list" || v == "watch" {
			return false, nil, nil
		}
		return true, nil, errors.New("the API server is out of reach")
	})
	m := startMember(t, cs, "a")
	eventually(t, "the lease is held", func() bool { return m.Held() == nil })
	sent := 0
	rt := m.Fence(roundTripper(func(*http.Request) (*http.Response, error) {
		sent++
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	}))
	// The API server stops answering the member's renewals (a partition,
	// or a paused process, as far as its Lease goes).
	unreachable.Store(true)
	eventually(t, "the renew deadline passed", func() bool { return m.Held() != nil })
	for _, tc := range []struct {
		method string
		pass   bool
	}{
		{http.MethodGet, true},
		{http.MethodPatch, false},
		{http.MethodPut, false},
		{http.MethodPost, false},
		{http.MethodDelete, false},
	} {
		before := sent
		req, _ := http.NewRequest(tc.method, "http://127.0.0.1/api/v1/namespaces/x/configmaps/y", http.NoBody)
		resp, err := rt.RoundTrip(req)
		if resp != nil {
			_ = resp.Body.Close()
		}
		if got := sent > before; got != tc.pass || (err == nil) != tc.pass {
			t.Errorf("%s with the lease past its renew deadline: sent %v (err %v), want sent %v", tc.method, got, err, tc.pass)
		}
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
