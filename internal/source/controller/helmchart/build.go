package helmchart

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	repo "helm.sh/helm/v4/pkg/repo/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source/artifact"
	"github.com/weir-gitops/weir/internal/source/chart"
	"github.com/weir-gitops/weir/internal/source/helmrepo"
	"github.com/weir-gitops/weir/internal/source/oci"
)

// dependencyTimeout is Flux's timeout for a dependency repository that no
// HelmRepository describes.
const dependencyTimeout = 60 * time.Second

// buildFromRepository pulls the chart from a HelmRepository: resolved in
// its stored index, or among an OCI registry's tags.
func (r *Reconciler) buildFromRepository(ctx context.Context, obj *sourcev1.HelmChart, hr *sourcev1.HelmRepository, dir string, out *outcome) (*chart.Build, error) {
	ctx, cancel := context.WithTimeout(ctx, hr.GetTimeout())
	defer cancel()
	c, err := helmrepo.NewClient(ctx, r.APIReader, hr, r.repositoryLimits(), r.Auth)
	if err != nil {
		return nil, clientError(err)
	}
	var remote chart.Repository
	if c.IsOCI() {
		o, err := r.ociRepository(ctx, obj, c)
		if err != nil {
			return nil, err
		}
		defer func() { out.verified = o.VerifiedBy != "" }()
		remote = o
	} else {
		idx, err := r.index(hr)
		if err != nil {
			return nil, &chart.BuildError{Reason: chart.ErrChartPull, Err: fmt.Errorf("could not load repository index for remote chart reference: %w", err)}
		}
		remote = &chart.IndexRepository{URL: c.URL(), Index: idx, Fetch: fetcher(c)}
	}
	valuesFiles := chart.EffectiveValuesFiles(obj.Spec.ValuesFiles)
	return chart.BuildRemote(ctx, remote, chart.RemoteOptions{
		Name:                     obj.Spec.Chart,
		Version:                  obj.Spec.Version,
		ValuesFiles:              valuesFiles,
		IgnoreMissingValuesFiles: obj.Spec.IgnoreMissingValuesFiles,
		VersionMetadata:          chart.VersionMetadata(r.stamp(obj, "", len(valuesFiles) > 0)),
		Limits:                   r.limits(),
		UpToDate:                 r.upToDate(obj),
		OutDir:                   dir,
	})
}

// buildFromSource packages the chart at spec.chart in a GitRepository or
// Bucket artifact.
func (r *Reconciler) buildFromSource(ctx context.Context, obj *sourcev1.HelmChart, src sourceObject, dir string) (*chart.Build, error) {
	a := src.GetArtifact()
	f, err := r.Storage.Open(*a)
	if err != nil {
		return nil, &errs.Generic{Err: fmt.Errorf("failed to open source artifact: %w", err), Reason: sourcev1.ReadOperationFailedReason}
	}
	defer func() { _ = f.Close() }()
	root := filepath.Join(dir, "source")
	// The artifact is this controller's own, bounded when it was stored;
	// Untar still refuses entries and links that would leave root.
	if err := artifact.Untar(f, root, -1); err != nil {
		return nil, &errs.Generic{Err: fmt.Errorf("artifact untar error: %w", err), Reason: "Failed"}
	}
	valuesFiles := chart.EffectiveValuesFiles(obj.Spec.ValuesFiles)
	return chart.BuildLocal(ctx, chart.LocalOptions{
		Root:                     root,
		Path:                     obj.Spec.Chart,
		ValuesFiles:              valuesFiles,
		IgnoreMissingValuesFiles: obj.Spec.IgnoreMissingValuesFiles,
		VersionMetadata:          chart.VersionMetadata(r.stamp(obj, a.Revision, len(valuesFiles) > 0)),
		Repositories:             r.dependencyRepositories(obj.Namespace),
		Limits:                   r.limits(),
		UpToDate:                 r.upToDate(obj),
		OutDir:                   filepath.Join(dir, "out"),
	})
}

func (r *Reconciler) stamp(obj *sourcev1.HelmChart, sourceRevision string, values bool) chart.Stamp {
	return chart.Stamp{
		SourceKind:       obj.Spec.SourceRef.Kind,
		SourceRevision:   sourceRevision,
		RevisionStrategy: obj.Spec.ReconcileStrategy == sourcev1.ReconcileStrategyRevision,
		ValuesFiles:      values,
		Generation:       obj.Generation,
	}
}

func (r *Reconciler) repositoryLimits() helmrepo.Limits { return r.Helm.Limits }

func fetcher(c *helmrepo.Client) func(context.Context, string, chart.Limits) ([]byte, error) {
	return func(ctx context.Context, u string, l chart.Limits) ([]byte, error) {
		return c.DownloadChart(ctx, u, l.MaxChartSize)
	}
}

// index returns the parsed index of a HelmRepository's stored artifact,
// from the cache when it holds it.
func (r *Reconciler) index(hr *sourcev1.HelmRepository) (*repo.IndexFile, error) {
	a := hr.GetArtifact()
	p, err := r.Storage.LocalPath(*a)
	if err != nil {
		return nil, err
	}
	idx, _, err := r.Helm.Cache.Load(a.Path, p, r.Helm.Limits.MaxIndexSize)
	return idx, err
}

// dependencyRepositories finds a dependency's repository: the
// HelmRepository in namespace whose URL matches (with its credentials and
// stored index), or, as Flux does, an anonymous repository at that URL.
func (r *Reconciler) dependencyRepositories(namespace string) chart.Repositories {
	return func(ctx context.Context, u string) (chart.Repository, error) {
		hr, err := r.repositoryFor(ctx, namespace, u)
		if err != nil {
			return nil, err
		}
		c, err := helmrepo.NewClient(ctx, r.APIReader, hr, r.repositoryLimits(), r.Auth)
		if err != nil {
			return nil, err
		}
		if c.IsOCI() {
			return &chart.OCIRepository{URL: c.URL(), Open: r.opener(c)}, nil
		}
		if a := hr.GetArtifact(); a != nil && r.Storage.Exists(*a) {
			idx, err := r.index(hr)
			if err != nil {
				return nil, err
			}
			return &chart.IndexRepository{URL: c.URL(), Index: idx, Fetch: fetcher(c)}, nil
		}
		ix, _, err := c.FetchIndex(ctx, helmrepo.Previous{})
		if err != nil {
			return nil, err
		}
		return &chart.IndexRepository{URL: c.URL(), Index: ix.File, Fetch: fetcher(c)}, nil
	}
}

func (r *Reconciler) repositoryFor(ctx context.Context, namespace, u string) (*sourcev1.HelmRepository, error) {
	var list sourcev1.HelmRepositoryList
	if err := r.Client.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{urlIndex: normalizeURL(u)}); err != nil {
		return nil, fmt.Errorf("unable to retrieve HelmRepositoryList: %w", err)
	}
	if len(list.Items) > 0 {
		return &list.Items[0], nil
	}
	hr := &sourcev1.HelmRepository{ObjectMeta: metav1.ObjectMeta{Namespace: namespace}}
	hr.Spec.URL, hr.Spec.Timeout = u, &metav1.Duration{Duration: dependencyTimeout}
	if strings.HasPrefix(u, "oci://") {
		hr.Spec.Type = sourcev1.HelmRepositoryTypeOCI
	}
	return hr, nil
}

func (r *Reconciler) opener(c *helmrepo.Client) func(context.Context, string) (oci.Remote, error) {
	return func(ctx context.Context, u string) (oci.Remote, error) {
		return r.OCI.Remote(ctx, u, c.OCIOptions())
	}
}

// clientError words a repository client failure: a URL or setup that
// cannot work stalls, credentials retry.
func clientError(err error) error {
	switch {
	case errors.Is(err, helmrepo.ErrInvalidURL):
		return &errs.Stalling{Err: err, Reason: sourcev1.URLInvalidReason}
	case errors.Is(err, helmrepo.ErrUnsupported):
		return &errs.Stalling{Err: err, Reason: sourcev1.AuthenticationFailedReason}
	default:
		return &errs.Generic{Err: err, Reason: sourcev1.AuthenticationFailedReason}
	}
}
