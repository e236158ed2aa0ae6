package kustomization

import (
	"net/http"
	"slices"
	"sync"
	"testing"

	"k8s.io/client-go/rest"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// requestLog records the requests sent through a rest.Config, watches
// aside (an informer's watch is open before and after a reconcile).
type requestLog struct {
	mu   sync.Mutex
	sent []string
}

func (l *requestLog) config(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.URL.Query().Get("watch") != "true" {
				l.mu.Lock()
				l.sent = append(l.sent, r.Method+" "+r.URL.Path)
				l.mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	})
	return c
}

func (l *requestLog) requests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.sent)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestQuietPeriodicReconcileSendsNoRequest converges a Kustomization,
// lets a Reconciler of its own (its own manager, caches and health watch)
// reconcile it once, which teaches it the apply memo, and then again, as
// the interval brings it back: that reconcile sends no request at all (the
// object and its source from the manager's cache, the build from the
// build cache, the ConfigMap unchanged from the memo and the health
// watch's cache, no status patch, no Event), and leaves the Kustomization
// as it was.
func TestQuietPeriodicReconcileSendsNoRequest(t *testing.T) {
	f, sha := newFixture(t, map[string]string{"app/cm.yaml": configMapYAML("cm", "k", "v")})
	k := f.kustomization("quiet", "./app", nil)
	f.env.Create(t, k)
	f.waitApplied(k, "main@sha1:"+sha)

	var log requestLog
	env := *testenv.Get(t)
	env.Config = log.config(env.Config)
	r := reconcilerOn(t, &env)
	firstPass(t, r, k)
	before := f.get(k)
	sent := len(log.requests())
	if sent == 0 {
		t.Fatal("no request counted for the first reconcile (its caches list): the count does not work")
	}
	firstPass(t, r, k)
	if got := log.requests()[sent:]; len(got) > 0 {
		t.Errorf("the periodic reconcile of a steady Kustomization sent %d requests: %v", len(got), got)
	}
	if after := f.get(k); after.ResourceVersion != before.ResourceVersion {
		t.Errorf("the periodic reconcile wrote the Kustomization (resourceVersion %s, was %s)",
			after.ResourceVersion, before.ResourceVersion)
	}
}

// get reads k as stored.
func (f *fixture) get(k *kustomizev1.Kustomization) *kustomizev1.Kustomization {
	f.t.Helper()
	var got kustomizev1.Kustomization
	if err := f.env.Client.Get(f.t.Context(), clientKey(k.Namespace, k.Name), &got); err != nil {
		f.t.Fatal(err)
	}
	return &got
}
