package chart

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"k8s.io/apimachinery/pkg/types"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
)

// The chart a HelmRelease installs: which object's artifact holds it, and
// loading it from that artifact. The helm controller installs what
// LoadArtifact returns; `weir diff hr`, `weir build hr` and the UI's "what
// would change" render the same chart through the same code.

// ErrNotLoadable is wrapped by LoadArtifact's error for an artifact that
// was fetched but holds no chart Helm can load (Flux's message leads).
var ErrNotLoadable = errors.New("Could not load chart") //nolint:staticcheck // Flux's message

// Fetch downloads a into dir: digest verified, the download and its
// extraction size-bounded (internal/source/artifact's Fetcher does all three).
type Fetch func(ctx context.Context, a *meta.Artifact, dir string) error

// SourceOf names the object whose artifact is obj's chart: the HelmChart
// spec.chart makes (<namespace>-<name>, in the namespace of the chart's
// source), or spec.chartRef's target. ok is false when neither is set.
func SourceOf(obj *helmv2.HelmRelease) (kind string, key types.NamespacedName, ok bool) {
	switch {
	case obj.Spec.Chart != nil:
		ns := obj.Spec.Chart.Spec.SourceRef.Namespace
		if ns == "" {
			ns = obj.Namespace
		}
		return sourcev1.HelmChartKind, types.NamespacedName{Namespace: ns, Name: obj.GetHelmChartName()}, true
	case obj.Spec.ChartRef != nil:
		ns := obj.Spec.ChartRef.Namespace
		if ns == "" {
			ns = obj.Namespace
		}
		return obj.Spec.ChartRef.Kind, types.NamespacedName{Namespace: ns, Name: obj.Spec.ChartRef.Name}, true
	}
	return "", types.NamespacedName{}, false
}

// LoadArtifact fetches a into a scratch directory and loads the chart it
// holds: a packaged chart (Chart.yaml in its one directory) or a tarball
// of a chart directory (Chart.yaml at the top). A fetch error is returned
// as fetch made it (errors.Is artifact.ErrArtifactNotFound holds); a
// chart that does not load wraps ErrNotLoadable, its paths relative to
// the artifact.
func LoadArtifact(ctx context.Context, fetch Fetch, a *meta.Artifact) (*chartv2.Chart, error) {
	dir, err := os.MkdirTemp("", "helmrelease-")
	if err != nil {
		return nil, fmt.Errorf("tmp dir error: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if err := fetch(ctx, a, dir); err != nil {
		return nil, err
	}
	root, err := chartRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotLoadable, err)
	}
	chrt, err := loader.LoadDir(root)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotLoadable, relative(err, dir))
	}
	return chrt, nil
}

// chartRoot finds the chart in an extracted artifact: Chart.yaml at the
// top, or in the single directory a packaged chart unpacks to.
func chartRoot(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err == nil {
		return dir, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), "Chart.yaml")); err == nil {
				return filepath.Join(dir, e.Name()), nil
			}
		}
	}
	return "", errors.New("no Chart.yaml in the artifact")
}

func relative(err error, dir string) error {
	msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}

// OCIDigest is the manifest digest of an OCIRepository artifact: the part
// of the revision after '@', else the artifact digest.
func OCIDigest(a *meta.Artifact) string {
	if _, d, ok := strings.Cut(a.Revision, "@"); ok {
		return d
	}
	return a.Digest
}

// WithDigest appends the first 12 hex characters of digest to version as
// build metadata, replacing any it had: Flux's rule for a chart from an
// OCIRepository, so that a re-pushed tag of the same version is an
// upgrade.
func WithDigest(version, digest string) string {
	_, hex, ok := strings.Cut(digest, ":")
	if !ok || len(hex) < 12 {
		return version
	}
	base, _, _ := strings.Cut(version, "+")
	return base + "+" + hex[:12]
}
