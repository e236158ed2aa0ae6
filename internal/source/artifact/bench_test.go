package artifact

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkArchive measures what a source reconcile pays to store a
// checkout of 20,000 small files (200 directories of 100 manifests of
// 250–1,000 bytes). files/s counts files archived, MB/s their content
// bytes. Sub-benchmarks:
//
//   - store: NewFilter, then Storage.Archive with fsync and rename — the
//     whole cost a reconcile sees;
//   - write: WriteArchive to io.Discard with no filter — walking, reading
//     and compressing only;
//   - filter: NewFilter alone — the walk looking for .sourceignore files.
func BenchmarkArchive(b *testing.B) {
	const dirs, perDir = 200, 100
	src := b.TempDir()
	var contentBytes int64
	for d := range dirs {
		dp := filepath.Join(src, fmt.Sprintf("apps/team-%03d", d))
		if err := os.MkdirAll(dp, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range perDir {
			body := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d-%d\n  namespace: team-%d\ndata:\n", d, f, d) +
				strings.Repeat(fmt.Sprintf("  key-%d: value-%d\n", f, d), 8+(d*perDir+f)%40)
			if err := os.WriteFile(filepath.Join(dp, fmt.Sprintf("cm-%03d.yaml", f)), []byte(body), 0o644); err != nil {
				b.Fatal(err)
			}
			contentBytes += int64(len(body))
		}
	}
	ctx := context.Background()
	// Wall-clock rates on a shared machine say more about the neighbours
	// than the code, so the CPU time this process used is reported too.
	var cpuStart time.Duration
	start := func(b *testing.B) {
		b.ResetTimer()
		cpuStart = cpuTime()
	}
	report := func(b *testing.B) {
		secs := b.Elapsed().Seconds()
		cpu := (cpuTime() - cpuStart).Seconds()
		b.ReportMetric(float64(dirs*perDir*b.N)/secs, "files/s")
		b.ReportMetric(float64(contentBytes*int64(b.N))/secs/1e6, "MB/s")
		b.ReportMetric(cpu*1e3/float64(b.N), "cpu-ms/op")
		b.ReportMetric(float64(dirs*perDir*b.N)/cpu, "files/cpu-s")
	}

	b.Run("store", func(b *testing.B) {
		s, _ := newTestStorage(b, Options{})
		var size int64
		start(b)
		for i := 0; b.Loop(); i++ {
			filter, err := NewFilter(src, nil)
			if err != nil {
				b.Fatal(err)
			}
			a := s.NewArtifactFor("GitRepository", object("default", "bench"), "rev", fmt.Sprintf("rev-%d.tar.gz", i%4))
			stats, err := s.Archive(ctx, &a, src, filter)
			if err != nil {
				b.Fatal(err)
			}
			if stats.Files != dirs*perDir {
				b.Fatalf("archived %d files", stats.Files)
			}
			size = stats.CompressedSize
		}
		report(b)
		b.ReportMetric(float64(size), "artifact-bytes")
	})
	b.Run("write", func(b *testing.B) {
		start(b)
		for b.Loop() {
			if _, err := WriteArchive(ctx, io.Discard, src, ArchiveOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		report(b)
	})
	b.Run("filter", func(b *testing.B) {
		start(b)
		for b.Loop() {
			if _, err := NewFilter(src, nil); err != nil {
				b.Fatal(err)
			}
		}
		report(b)
	})
}

// cpuTime is the user and system time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
