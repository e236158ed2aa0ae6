package ssa_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

func TestMain(m *testing.M) {
	// controller-runtime prints a warning with a stack trace when something
	// logs through its logger and none was set.
	ctrllog.SetLogger(logr.Discard())
	testenv.Main(m)
}

// writeCounter counts a client's requests, and among them the ones that
// change the cluster (every request but reads and dry-runs), the reads of
// objects and lists (GET, discovery left out) and the dry-runs.
type writeCounter struct {
	writes   atomic.Int64
	requests atomic.Int64
	reads    atomic.Int64
	dryRuns  atomic.Int64
}

type countingTransport struct {
	next    http.RoundTripper
	counter *writeCounter
}

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.counter.requests.Add(1)
	dryRun := strings.Contains(req.URL.RawQuery, "dryRun=All")
	switch {
	case req.Method == http.MethodGet:
		// /api/v1, /apis/<group>/<version>: the RESTMapper's discovery.
		if strings.Count(req.URL.Path, "/") >= 4 {
			t.counter.reads.Add(1)
		}
	case dryRun:
		t.counter.dryRuns.Add(1)
	default:
		t.counter.writes.Add(1)
	}
	return t.next.RoundTrip(req)
}

// newManager returns a Manager over a client of its own, whose requests
// the returned counter counts, polling fast enough for tests. The client
// keeps testenv's rate limit (200 requests per second, burst 400) unless
// SSA_BENCH_UNTHROTTLED is set, to measure what the API server itself
// sustains.
func newManager(t testing.TB) (*ssa.Manager, *writeCounter) {
	t.Helper()
	env := testenv.Get(t)
	counter := &writeCounter{}
	cfg := rest.CopyConfig(env.Config)
	if os.Getenv("SSA_BENCH_UNTHROTTLED") != "" {
		cfg.QPS = -1
	}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return countingTransport{next: rt, counter: counter}
	}
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return ssa.NewManager(c, ssa.Options{PollInterval: 100 * time.Millisecond}), counter
}

// objects decodes a multi-document YAML manifest.
func objects(t testing.TB, manifest string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(manifest, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("decoding %q: %v", doc, err)
		}
		out = append(out, u)
	}
	return out
}

// get reads an object of the given apiVersion and kind.
func get(t testing.TB, apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	if err := testenv.Get(t).Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
		t.Fatalf("reading %s %s/%s: %v", kind, namespace, name, err)
	}
	return u
}

// actions maps each entry's subject to its action.
func actions(cs *ssa.ChangeSet) map[string]ssa.Action {
	out := map[string]ssa.Action{}
	for _, e := range cs.Entries {
		out[e.ObjMetadata.String()] = e.Action
	}
	return out
}

// uniqueName returns a DNS label starting with prefix that no other test
// uses.
func uniqueName(prefix string) string { return prefix + "-" + utilrand.String(6) }
