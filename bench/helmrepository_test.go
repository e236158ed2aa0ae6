package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/source/artifact"
	"github.com/weir-gitops/weir/internal/source/helmrepo"
)

// BenchmarkHelmIndex measures what a HelmRepository of a large public
// repository costs (the biggest indexes hold ~10,000 chart versions, ~20
// MB): fetching, hashing, parsing and storing the index once, an unchanged
// poll, resolving a version from the parsed (cached) index, and loading the
// stored artifact again (a HelmChart's cache miss). Heap figures are the
// peak of live heap objects above the level before the step, sampled every
// millisecond, and the heap the parsed index keeps once collected (what
// one entry of --helm-cache-max-size costs).
func BenchmarkHelmIndex(b *testing.B) {
	for _, n := range []int{1000, 5000, 10000} {
		b.Run(fmt.Sprintf("versions=%d", n), func(b *testing.B) { benchmarkIndex(b, n) })
	}
}

func benchmarkIndex(b *testing.B, versions int) {
	data := syntheticIndex(b, versions)
	etag := fmt.Sprintf(`"%d-%d"`, versions, len(data))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", etag)
		http.ServeContent(w, r, "index.yaml", time.Time{}, bytes.NewReader(data))
	}))
	b.Cleanup(srv.Close)
	storage, err := artifact.NewStorage(b.TempDir(), "127.0.0.1:0", artifact.Options{})
	if err != nil {
		b.Fatal(err)
	}
	obj := &sourcev1.HelmRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "big"}, Spec: sourcev1.HelmRepositorySpec{URL: srv.URL}}
	c, err := helmrepo.NewClient(context.Background(), nil, obj, helmrepo.Limits{}, nil)
	if err != nil {
		b.Fatal(err)
	}

	var ix *helmrepo.Index
	var stored string
	b.Run("fetch-parse-store", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			peak := measurePeak(func() { ix, stored = fetchAndStore(b, c, storage, obj) })
			b.ReportMetric(peak/1e6, "MB-peak-heap")
			b.ReportMetric(float64(len(data))/1e6, "MB-index")
		}
	})
	b.Run("retained-by-cache", func(b *testing.B) {
		for b.Loop() {
			b.ReportMetric(retained(func() any { return loadStored(b, stored) })/1e6, "MB-retained")
		}
	})
	// A poll of an unchanged index: a 304 to If-None-Match, or, from a
	// server without validators, a download that is hashed, not parsed.
	for name, prev := range map[string]helmrepo.Previous{"unchanged-poll-etag": ix.Previous(), "unchanged-poll-digest": {Digest: ix.Digest}} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				peak := measurePeak(func() {
					if _, changed, err := c.FetchIndex(context.Background(), prev); err != nil || changed {
						b.Fatalf("changed=%v, %v", changed, err)
					}
				})
				b.ReportMetric(peak/1e6, "MB-peak-heap")
			}
		})
	}
	b.Run("resolve-from-cache", func(b *testing.B) {
		idx := ix.File
		const resolves = 1000
		for b.Loop() {
			start := time.Now()
			for i := range resolves {
				if _, err := idx.Get(fmt.Sprintf("chart-%d", i%(versions/100)), ">=1.20.0 <1.50.0"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/resolves, "µs/resolve")
		}
	})
	b.Run("load-stored-artifact", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			peak := measurePeak(func() { loadStored(b, stored) })
			b.ReportMetric(peak/1e6, "MB-peak-heap")
		}
	})
}

// fetchAndStore is the HelmRepository reconciler's work for a new index.
func fetchAndStore(b *testing.B, c *helmrepo.Client, storage *artifact.Storage, obj *sourcev1.HelmRepository) (*helmrepo.Index, string) {
	ix, changed, err := c.FetchIndex(context.Background(), helmrepo.Previous{})
	if err != nil || !changed {
		b.Fatalf("fetch: changed=%v, %v", changed, err)
	}
	data, err := helmrepo.MarshalJSON(ix.File)
	if err != nil {
		b.Fatal(err)
	}
	a := storage.NewArtifactFor(sourcev1.HelmRepositoryKind, obj, ix.Digest, "index.yaml")
	if err := storage.Copy(context.Background(), &a, bytes.NewReader(data)); err != nil {
		b.Fatal(err)
	}
	p, err := storage.LocalPath(a)
	if err != nil {
		b.Fatal(err)
	}
	return ix, p
}

func loadStored(b *testing.B, p string) *repo.IndexFile {
	idx, err := helmrepo.LoadIndexFile(p, 0)
	if err != nil {
		b.Fatal(err)
	}
	return idx
}

// syntheticIndex is an index of `versions` chart versions, 100 per chart,
// with entries the size of real ones (description, maintainers, sources,
// keywords, annotations as Artifact Hub reads them, digest, URL): about
// 2 kB each in YAML, so 10,000 versions make a 20 MB index, the size of the
// largest public ones.
func syntheticIndex(b *testing.B, versions int) []byte {
	b.Helper()
	idx := repo.NewIndexFile()
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range versions {
		name := fmt.Sprintf("chart-%d", i/100)
		md := &chart.Metadata{
			APIVersion: chart.APIVersionV2, Name: name, Version: fmt.Sprintf("1.%d.%d", i%100, i%7), AppVersion: fmt.Sprintf("%d.%d.0", i%13, i%100),
			Description: "A synthetic chart of a benchmark, described at about the length of a real chart's description in a public index: " +
				"what the application does, which database it needs, how it scales, and where its documentation lives. Public indexes " +
				"carry a few hundred bytes of this per version, repeated for every version of every chart.",
			Home: "https://charts.example.com/" + name, Icon: "https://charts.example.com/" + name + "/icon.svg",
			Keywords:    []string{"benchmark", "synthetic", "helm", "weir", name},
			Sources:     []string{"https://github.com/example/charts/tree/main/" + name, "https://github.com/example/" + name},
			Maintainers: []*chart.Maintainer{{Name: "Bench Maintainer", Email: "bench@example.com", URL: "https://example.com"}},
			Annotations: map[string]string{
				"category": "Infrastructure", "licenses": "Apache-2.0", "tanzuCategory": "application",
				"artifacthub.io/changes": fmt.Sprintf("- kind: changed\n  description: Update dependency to %d.%d\n- kind: fixed\n  description: Probe timeouts\n", i%13, i%100),
				"artifacthub.io/links":   "- name: Chart Source\n  url: https://github.com/example/charts\n- name: Upstream\n  url: https://example.com/" + name + "\n",
				"images":                 fmt.Sprintf("- name: %s\n  image: registry.example.com/%s:%d.%d.0\n- name: os-shell\n  image: registry.example.com/os-shell:12-debian-12-r%d\n", name, name, i%13, i%100, i%50),
			},
			Dependencies: []*chart.Dependency{{Name: "common", Version: "2.x.x", Repository: "oci://registry.example.com/charts", Tags: []string{"common"}}},
		}
		cv := &repo.ChartVersion{Metadata: md, URLs: []string{fmt.Sprintf("https://charts.example.com/%s-%s.tgz", name, md.Version)},
			Created: created.Add(time.Duration(i) * time.Hour), Digest: fmt.Sprintf("%064x", i)}
		idx.Entries[name] = append(idx.Entries[name], cv)
	}
	idx.SortEntries()
	data, err := yaml.Marshal(idx)
	if err != nil {
		b.Fatal(err)
	}
	if os.Getenv("WEIR_BENCH_KEEP_INDEX") != "" {
		_ = os.WriteFile(filepath.Join(os.TempDir(), fmt.Sprintf("weir-bench-index-%d.yaml", versions)), data, 0o600)
	}
	return data
}

// heapBytes is the heap taken by live and not yet swept objects.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// measurePeak runs f and returns the highest heap sampled during it above
// the heap before it.
func measurePeak(f func()) float64 {
	runtime.GC()
	base := heapBytes()
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if h := heapBytes(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(done)
	if h := heapBytes(); h > peak.Load() {
		peak.Store(h)
	}
	return float64(peak.Load() - min(peak.Load(), base))
}

// retained is the heap that what f returns keeps alive after collection.
func retained(f func() any) float64 {
	runtime.GC()
	base := heapBytes()
	v := f()
	runtime.GC()
	after := heapBytes()
	runtime.KeepAlive(v)
	return float64(after - min(after, base))
}
