package chart

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	repo "helm.sh/helm/v4/pkg/repo/v1"

	"github.com/weir-gitops/weir/internal/source/oci"
)

// ChartLayerMediaType is the media type of the layer holding a chart
// archive in a Helm OCI artifact.
const ChartLayerMediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"

// OCIRepository is a Repository in an OCI registry: chart name lives at
// <url>/<name>, versions are tags ("+" written "_"). It reuses the
// registry client (and cosign verifier) of the OCIRepository controller.
type OCIRepository struct {
	// URL is the HelmRepository's oci://host/path.
	URL string
	// Open returns the registry repository at an oci:// URL, with the
	// credentials that belong to it.
	Open func(ctx context.Context, url string) (oci.Remote, error)
	// Verify, when set, checks each resolved chart's signature before it
	// is used, and returns the verifying key's name.
	Verify func(remote oci.Remote, res *oci.Resolved) (string, error)

	mu       sync.Mutex
	resolved map[*repo.ChartVersion]ociPick
	// VerifiedBy names the key that verified the last resolved chart.
	VerifiedBy string
}

type ociPick struct {
	remote oci.Remote
	res    *oci.Resolved
}

// Resolve picks a tag: the exact version when version is one, else the
// highest tag satisfying the constraint ("*" when empty). The chart
// version's Digest is the manifest digest.
func (r *OCIRepository) Resolve(ctx context.Context, name, version string) (*repo.ChartVersion, error) {
	url := strings.TrimSuffix(r.URL, "/") + "/" + name
	remote, err := r.Open(ctx, url)
	if err != nil {
		return nil, &BuildError{Reason: ErrChartReference, Err: err}
	}
	ref := oci.Reference{SemVer: version}
	if _, err := ParseVersion(version); err == nil {
		ref = oci.Reference{Tag: strings.ReplaceAll(version, "+", "_")}
	} else if version == "" {
		ref.SemVer = "*"
	}
	res, err := remote.Resolve(ref)
	if err != nil {
		// A registry that cannot be read is a pull failure worth retrying
		// (Flux's ChartPullError), not a bad reference.
		return nil, &BuildError{Reason: ErrChartPull, Err: fmt.Errorf("failed to get chart version for remote reference: %w", err)}
	}
	if r.Verify != nil {
		if r.VerifiedBy, err = r.Verify(remote, res); err != nil {
			return nil, &BuildError{Reason: ErrChartVerification, Err: err}
		}
	}
	cv := &repo.ChartVersion{
		Metadata: &chartv2.Metadata{Name: name, Version: strings.ReplaceAll(res.Tag, "_", "+")},
		URLs:     []string{url + ":" + res.Tag},
		Digest:   res.Digest,
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.resolved == nil {
		r.resolved = map[*repo.ChartVersion]ociPick{}
	}
	r.resolved[cv] = ociPick{remote: remote, res: res}
	return cv, nil
}

// Download pulls the chart layer of a version Resolve returned.
func (r *OCIRepository) Download(_ context.Context, cv *repo.ChartVersion, l Limits) ([]byte, error) {
	r.mu.Lock()
	pick, ok := r.resolved[cv]
	r.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("chart '%s' version '%s' was not resolved in this repository", cv.Name, cv.Version)
	}
	dir, err := os.MkdirTemp("", "helmchart-oci-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	dst := filepath.Join(dir, "chart.tgz")
	if _, err := pick.remote.Pull(pick.res, dst, oci.PullOptions{MediaType: ChartLayerMediaType, Copy: true, MaxSize: l.chartSize()}); err != nil {
		return nil, fmt.Errorf("failed to pull '%s': %w", cv.URLs[0], err)
	}
	return ReadArchiveFile(dst, l)
}
