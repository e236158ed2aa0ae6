package benchenv

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
)

// requests counts what the controllers send to the API server, in total
// and by method and resource.
var requests struct {
	total  atomic.Int64
	mu     sync.Mutex
	byKind map[string]int64
}

// Requests returns how many requests the controllers Start ran have sent.
func Requests() int64 { return requests.total.Load() }

// DryRun marks the requests sent with dryRun in RequestCounts and
// RequestBreakdown ("PATCH (dry-run) configmaps"): they write nothing.
const DryRun = "(dry-run)"

// RequestCounts returns the requests sent so far by method and resource
// ("PATCH kustomizations/status"), for a difference between two moments.
func RequestCounts() map[string]int64 {
	requests.mu.Lock()
	defer requests.mu.Unlock()
	out := make(map[string]int64, len(requests.byKind))
	for k, v := range requests.byKind {
		out[k] = v
	}
	return out
}

// RequestBreakdown lists the requests sent so far by method and resource
// ("PATCH kustomizations/status 812"), largest first.
func RequestBreakdown() string {
	requests.mu.Lock()
	defer requests.mu.Unlock()
	keys := make([]string, 0, len(requests.byKind))
	for k := range requests.byKind {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return int(requests.byKind[b] - requests.byKind[a]) })
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "%s %d\n", k, requests.byKind[k])
	}
	return sb.String()
}

// counting returns a copy of cfg whose requests are counted.
func counting(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			requests.total.Add(1)
			key := r.Method + " " + resourceOf(r.URL.Path)
			switch q := r.URL.Query(); {
			case q.Get("watch") == "true":
				key = "WATCH " + resourceOf(r.URL.Path)
			case q.Has("dryRun"):
				key = r.Method + " " + DryRun + " " + resourceOf(r.URL.Path)
			}
			requests.mu.Lock()
			if requests.byKind == nil {
				requests.byKind = map[string]int64{}
			}
			requests.byKind[key]++
			requests.mu.Unlock()
			start := time.Now()
			resp, err := rt.RoundTrip(r)
			if trace.on {
				t := traced{start: start, duration: time.Since(start), method: r.Method, resource: resourceOf(r.URL.Path),
					dryRun: r.URL.Query().Has("dryRun"), sent: r.ContentLength}
				if resp != nil {
					t.code = resp.StatusCode
				}
				record(t)
			}
			return resp, err
		})
	})
	return c
}

// resourceOf is the resource of an API path, with its subresource:
// /apis/g/v/namespaces/ns/kustomizations/name/status → kustomizations/status.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	skip := 3 // apis/<group>/<version>
	if parts[0] == "api" {
		skip = 2 // api/v1
	}
	if len(parts) <= skip {
		return "discovery"
	}
	parts = parts[skip:]
	if len(parts) > 2 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	if len(parts) > 2 {
		return parts[0] + "/" + parts[2]
	}
	return parts[0]
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
