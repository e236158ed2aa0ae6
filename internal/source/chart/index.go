package chart

import (
	"context"
	"fmt"

	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// IndexRepository is a Repository over an HTTP repository's parsed
// index; Fetch downloads a chart URL (absolute, resolved against URL)
// with whatever credentials the repository carries.
type IndexRepository struct {
	URL   string
	Index *repo.IndexFile
	Fetch func(ctx context.Context, url string, l Limits) ([]byte, error)
}

// Resolve picks a version from the index by Flux's rules.
func (r *IndexRepository) Resolve(_ context.Context, name, version string) (*repo.ChartVersion, error) {
	return ResolveVersion(r.Index, name, version)
}

// Download fetches the first URL of cv.
func (r *IndexRepository) Download(ctx context.Context, cv *repo.ChartVersion, l Limits) ([]byte, error) {
	if len(cv.URLs) == 0 {
		return nil, fmt.Errorf("chart '%s' version '%s' has no downloadable URLs", cv.Name, cv.Version)
	}
	u, err := repo.ResolveReferenceURL(r.URL, cv.URLs[0])
	if err != nil {
		return nil, err
	}
	return r.Fetch(ctx, u, l)
}
