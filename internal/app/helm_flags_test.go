package app

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestHelmFlags(t *testing.T) {
	o := DefaultOptions()
	if o.HelmIndexMaxSize != 52428800 || o.HelmChartMaxSize != 10485760 || o.HelmChartFileMaxSize != 5242880 ||
		o.HelmCacheMaxSize != 0 || o.HelmCacheTTL != 15*time.Minute || o.HelmCachePurgeInterval != time.Minute {
		t.Errorf("defaults differ from source-controller's: %+v", o)
	}
	if helmDeps(&o).Cache != nil {
		t.Error("the index cache is on by default; Flux's --helm-cache-max-size=0 disables it")
	}
	fs := pflag.NewFlagSet("weir-controller", pflag.ContinueOnError)
	o.AddFlags(fs)
	// The values flux2's "large cluster" profile and Flux's docs use.
	err := fs.Parse([]string{"--helm-cache-max-size=10", "--helm-cache-ttl=60m", "--helm-cache-purge-interval=5m",
		"--helm-index-max-size=1048576", "--helm-chart-max-size=2097152", "--helm-chart-file-max-size=1024"})
	if err != nil {
		t.Fatal(err)
	}
	h := helmDeps(&o)
	if h.Cache == nil || h.Limits.MaxIndexSize != 1<<20 || h.Limits.MaxChartSize != 2<<20 || h.MaxChartFileSize != 1024 {
		t.Errorf("flags not applied: %+v", h)
	}
	if o.HelmCacheTTL != time.Hour || o.HelmCachePurgeInterval != 5*time.Minute {
		t.Errorf("cache durations %s %s", o.HelmCacheTTL, o.HelmCachePurgeInterval)
	}
}

// TestGracefulShutdownOnlyWithHelm: --graceful-shutdown-timeout (600s, as
// Flux's helm-controller) holds the manager's shutdown only in a process
// that runs Helm actions; the others keep controller-runtime's default.
func TestGracefulShutdownOnlyWithHelm(t *testing.T) {
	o := DefaultOptions()
	if got := gracefulShutdown(o, []string{"source", "kustomize"}); got != nil {
		t.Errorf("without helm: %v, want controller-runtime's default", *got)
	}
	got := gracefulShutdown(o, []string{"kustomize", "helm"})
	if got == nil || *got != 600*time.Second {
		t.Errorf("with helm: %v, want 600s", got)
	}
}
