package image

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/bench/internal/benchenv"
	"github.com/weir-gitops/weir/internal/app"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
)

// tagCount is the size of the scanned repository.
const tagCount = 10000

// storageDir is --storage-path of the controllers under test.
var storageDir string

func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		os.Exit(m.Run()) // plain `go test ./...`: start nothing
	}
	testenv.Main(m, testenv.APIServerOnly, func(o *testenv.Options) { o.Setup = startControllers })
}

func startControllers(ctx context.Context, env *testenv.Env) error {
	dir, err := os.MkdirTemp("", "weir-bench-image-")
	if err != nil {
		return err
	}
	storageDir = dir
	return benchenv.Start(ctx, env.Config, func(o *app.Options) {
		o.Controllers = []string{"image-reflector"}
		o.StoragePath = dir
	})
}

// BenchmarkImageRepository10kTags: each iteration creates an
// ImageRepository of a 10,000-tag repository and waits until it is Ready.
// Reported: seconds from create to Ready (one full scan: every page of the
// tag list, the exclusion list, sorting, storing), MB allocated by the
// process meanwhile, the heap in use after it, and the stored file's size.
func BenchmarkImageRepository10kTags(b *testing.B) {
	// The outer function runs once; b.Run repeats only the scans, so the
	// tags are pushed once.
	reg := ociregistry.New(b, ociregistry.Options{})
	tags := make([]string, tagCount)
	for i := range tags {
		tags[i] = fmt.Sprintf("1.%d.%d", i/100, i%100)
	}
	start := time.Now()
	reg.PushTags(b, "bench/app", "bench", tags...)
	b.Logf("pushed %d tags in %s", tagCount, time.Since(start).Round(time.Millisecond))
	b.Run("scan", func(b *testing.B) { benchmarkScan(b, reg) })
}

func benchmarkScan(b *testing.B, reg *ociregistry.Registry) {
	env := testenv.Get(b)

	var scan, alloc, heap, size float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ns := env.Namespace(b)
		repo := &imagev1.ImageRepository{
			ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
			Spec:       imagev1.ImageRepositorySpec{Image: reg.Host() + "/bench/app", Interval: metav1.Duration{Duration: time.Hour}},
		}
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		t0 := time.Now()
		env.Create(b, repo)
		env.WaitForReady(b, repo, nil)
		scan += time.Since(t0).Seconds()
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		alloc += float64(after.TotalAlloc-before.TotalAlloc) / (1 << 20)
		heap += float64(after.HeapInuse) / (1 << 20)
		if repo.Status.LastScanResult.TagCount != tagCount {
			b.Fatalf("tagCount %d, want %d", repo.Status.LastScanResult.TagCount, tagCount)
		}
		files, _ := filepath.Glob(filepath.Join(storageDir, "imagerepository", ns, "app", "*"))
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil {
				size += float64(fi.Size())
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(scan/n, "scan-s")
	b.ReportMetric(alloc/n, "alloc-MB/scan")
	b.ReportMetric(heap/n, "heap-MB")
	b.ReportMetric(size/n, "stored-bytes")
}
