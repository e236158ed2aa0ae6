package dev

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/scheme"
)

// TestServeCharts serves the example charts as weir dev does and reads the
// index the HelmRepository will fetch.
func TestServeCharts(t *testing.T) {
	s, archives, err := serveCharts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if len(archives) != 1 || archives[0] != "hello-0.1.0.tgz" {
		t.Errorf("archives %v, want [hello-0.1.0.tgz]", archives)
	}
	resp, err := http.Get(s.URL() + "/index.yaml") //nolint:noctx // a test on 127.0.0.1
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), s.URL()+"/hello-0.1.0.tgz") {
		t.Errorf("index.yaml: %s\n%s", resp.Status, body)
	}
	want := "✔ example chart repository at " + s.URL() + " (hello-0.1.0.tgz), HelmRepository flux-system/charts\n"
	if got := chartsLine(s.URL(), archives); got != want {
		t.Errorf("line %q, want %q", got, want)
	}
}

// TestCreateChartsRepository checks the HelmRepository weir dev creates.
func TestCreateChartsRepository(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).Build()
	ctx := context.Background()
	if err := createChartsRepository(ctx, c, "http://127.0.0.1:8080"); err != nil {
		t.Fatal(err)
	}
	var repo sourcev1.HelmRepository
	if err := c.Get(ctx, client.ObjectKey{Namespace: "flux-system", Name: "charts"}, &repo); err != nil {
		t.Fatal(err)
	}
	if repo.Spec.URL != "http://127.0.0.1:8080" || repo.Spec.Type != "" || repo.Spec.Interval.Duration == 0 {
		t.Errorf("HelmRepository spec: %+v", repo.Spec)
	}
	if err := createChartsRepository(ctx, c, "http://127.0.0.1:8080"); err == nil {
		t.Error("creating it twice did not fail")
	}
}
