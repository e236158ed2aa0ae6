package app

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// TestMetricsServerServesProfiles: the metrics address serves /metrics
// and Go's profiles under /debug/pprof/, where Flux's debugging guide
// tells a user to fetch them.
func TestMetricsServerServesProfiles(t *testing.T) {
	env := testenv.Get(t)
	t.Setenv("KUBECONFIG", env.ControlPlane.KubeconfigPath())
	cfg, err := ctrl.GetConfig()
	if err != nil {
		t.Fatal(err)
	}
	metrics := freeAddr(t)
	opts := DefaultOptions()
	opts.Controllers = []string{"source"}
	opts.MetricsAddr, opts.HealthAddr, opts.SkipNameValidation = metrics, "0", true
	storage := freeAddr(t)
	opts.StoragePath, opts.StorageAddr, opts.StorageAdvAddr = t.TempDir(), storage, storage
	runInBackground(t, cfg, opts)

	tests := []struct {
		path string
		want string
	}{
		{"/metrics", "controller_runtime_"},
		{"/debug/pprof/", "goroutine"},
		{"/debug/pprof/heap?debug=1", "heap profile:"},
		{"/debug/pprof/goroutine?debug=1", "goroutine profile:"},
		{"/debug/pprof/cmdline", ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			var body string
			testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+metrics+tt.path, nil)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return false, err.Error()
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				body = string(b)
				return resp.StatusCode == http.StatusOK, resp.Status
			})
			if !strings.Contains(body, tt.want) {
				t.Errorf("GET %s: %.200q lacks %q", tt.path, body, tt.want)
			}
		})
	}
}
