package ssa_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

const benchObjects = 1500

func configMaps(b *testing.B, ns string, changed int, value string) string {
	b.Helper()
	var s strings.Builder
	for i := range benchObjects {
		v := "1"
		if i == changed {
			v = value
		}
		fmt.Fprintf(&s, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%04d, namespace: %s}\ndata: {index: \"%d\", value: \"%s\"}\n---\n", i, ns, i, v)
	}
	return s.String()
}

// BenchmarkApply applies 1,500 ConfigMaps: into an empty namespace (cold),
// again unchanged (the steady-state reconcile), and with one of them
// changed. requests/op counts every request, writes/op the ones that
// changed the cluster. The client is rate-limited to 200 requests per
// second (testenv's setting; kustomize-controller defaults to 50, burst
// 300), which bounds the figures; SSA_BENCH_UNTHROTTLED=1 lifts the limit
// to show what the API server sustains on this machine.
func BenchmarkApply(b *testing.B) {
	env := testenv.Get(b)
	ctx := context.Background()
	opts := ssa.ApplyOptions{Owner: &ssa.Owner{Name: "bench", Namespace: "flux-system"}}
	report := func(b *testing.B, writes, requests int64) {
		b.ReportMetric(float64(writes)/float64(b.N), "writes/op")
		b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
	}

	b.Run("cold", func(b *testing.B) {
		m, c := newManager(b)
		var writes, requests int64
		for b.Loop() {
			b.StopTimer()
			set := objects(b, configMaps(b, env.Namespace(b), -1, ""))
			w, r := c.writes.Load(), c.requests.Load()
			b.StartTimer()
			cs, err := m.Apply(ctx, set, opts)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			writes, requests = writes+c.writes.Load()-w, requests+c.requests.Load()-r
			if len(cs.Entries) != benchObjects || cs.Entries[0].Action != ssa.Created {
				b.Fatalf("cold apply: %d entries, first %v", len(cs.Entries), cs.Entries[0])
			}
			b.StartTimer()
		}
		report(b, writes, requests)
	})

	ns := env.Namespace(b)
	m, c := newManager(b)
	if _, err := m.Apply(ctx, objects(b, configMaps(b, ns, -1, "")), opts); err != nil {
		b.Fatal(err)
	}

	b.Run("noop", func(b *testing.B) {
		set := objects(b, configMaps(b, ns, -1, ""))
		w0, r0 := c.writes.Load(), c.requests.Load()
		for b.Loop() {
			cs, err := m.Apply(ctx, set, opts)
			if err != nil {
				b.Fatal(err)
			}
			if changes := cs.Changes(); changes != "" {
				b.Fatalf("no-op apply changed %s", changes)
			}
		}
		report(b, c.writes.Load()-w0, c.requests.Load()-r0)
	})

	b.Run("one-change", func(b *testing.B) {
		var sets [2][]*unstructured.Unstructured
		sets[0] = objects(b, configMaps(b, ns, 700, "a"))
		sets[1] = objects(b, configMaps(b, ns, 700, "b"))
		w0, r0 := c.writes.Load(), c.requests.Load()
		i := 0
		for b.Loop() {
			cs, err := m.Apply(ctx, sets[i%2], opts)
			if err != nil {
				b.Fatal(err)
			}
			if got, want := cs.Changes(), "ConfigMap/"+ns+"/cm-0700 configured"; got != want {
				b.Fatalf("one-change apply: %q, want %q", got, want)
			}
			i++
		}
		report(b, c.writes.Load()-w0, c.requests.Load()-r0)
	})
}
