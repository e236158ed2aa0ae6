package dev

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/examples"
	"github.com/weir-gitops/weir/internal/devenv/chartserve"
)

// chartsName names the HelmRepository weir dev points at its chart
// repository.
const chartsName = "charts"

// serveCharts writes the example charts (examples.Charts) under dir/charts,
// packages each into the chart repository dir/helm and serves that on
// 127.0.0.1. It returns the server and the archives it serves.
func serveCharts(dir string) (*chartserve.Server, []string, error) {
	src := filepath.Join(dir, "charts")
	if err := os.CopyFS(src, examples.Charts()); err != nil {
		return nil, nil, fmt.Errorf("writing the example charts: %w", err)
	}
	entries, err := fs.ReadDir(examples.Charts(), ".")
	if err != nil {
		return nil, nil, fmt.Errorf("listing the example charts: %w", err)
	}
	s, err := chartserve.Start(filepath.Join(dir, "helm"))
	if err != nil {
		return nil, nil, err
	}
	var archives []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		archive, err := s.Package(filepath.Join(src, e.Name()))
		if err != nil {
			_ = s.Close()
			return nil, nil, err
		}
		archives = append(archives, archive)
	}
	return s, archives, nil
}

// createChartsRepository creates the HelmRepository flux-system/charts for
// the chart repository at url. weir dev does not wait for it: whether it
// becomes Ready depends on a HelmRepository controller running, and
// --once converges on the fleet's Kustomizations alone.
func createChartsRepository(ctx context.Context, c client.Client, url string) error {
	repo := &sourcev1.HelmRepository{
		ObjectMeta: metav1.ObjectMeta{Name: chartsName, Namespace: namespace},
		Spec: sourcev1.HelmRepositorySpec{
			URL:      url,
			Interval: metav1.Duration{Duration: 10 * time.Minute},
		},
	}
	if err := c.Create(ctx, repo); err != nil {
		return fmt.Errorf("creating HelmRepository %s: %w", chartsName, err)
	}
	return nil
}

// chartsLine is weir dev's line about its chart repository.
func chartsLine(url string, archives []string) string {
	return fmt.Sprintf("✔ example chart repository at %s (%s), HelmRepository %s/%s\n",
		url, strings.Join(archives, ", "), namespace, chartsName)
}
