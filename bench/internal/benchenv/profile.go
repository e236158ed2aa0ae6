package benchenv

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
)

// heapProfiles numbers the heap profiles Measure writes.
var heapProfiles atomic.Int64

// writeHeapProfile writes the heap in use (after a GC) to
// $WEIR_BENCH_HEAPPROFILE-<n>.pb.gz when that variable is set: the
// moment a measured step ends, while the controllers still hold what it
// made (go test's -memprofile is written after the namespaces are gone).
func writeHeapProfile() error {
	prefix := os.Getenv("WEIR_BENCH_HEAPPROFILE")
	if prefix == "" {
		return nil
	}
	f, err := os.Create(fmt.Sprintf("%s-%d.pb.gz", prefix, heapProfiles.Add(1)))
	if err != nil {
		return fmt.Errorf("creating the heap profile: %w", err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		return fmt.Errorf("writing the heap profile: %w", err)
	}
	return nil
}
