package chart

import (
	"context"
	"errors"
	"fmt"

	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// RemoteOptions says what to build from a repository.
type RemoteOptions struct {
	// Name and Version are spec.chart and spec.version.
	Name, Version string
	// ValuesFiles are paths inside the chart, merged in order.
	ValuesFiles              []string
	IgnoreMissingValuesFiles bool
	VersionMetadata          string
	Limits                   Limits
	UpToDate                 func(name, version string) bool
	OutDir                   string
}

// BuildRemote resolves opts.Version of opts.Name in r, downloads it
// within the limits unless UpToDate says the stored chart is this one,
// and takes the archive as is, or repackages it when values files or
// version metadata change it.
func BuildRemote(ctx context.Context, r Repository, opts RemoteOptions) (*Build, error) {
	cv, err := r.Resolve(ctx, opts.Name, opts.Version)
	var be *BuildError
	if errors.As(err, &be) {
		return nil, be // classified by the repository (OCI pulls, verification)
	}
	if err != nil {
		return nil, buildErr(ErrChartReference, fmt.Errorf("failed to get chart version for remote reference: %w", err))
	}
	b := &Build{Name: cv.Name, Digest: cv.Digest}
	if b.Name == "" {
		b.Name = opts.Name
	}
	if b.Version, err = WithMetadata(cv.Version, opts.VersionMetadata); err != nil {
		return b, buildErr(ErrChartMetadataPatch, err)
	}
	valuesFiles := EffectiveValuesFiles(opts.ValuesFiles)
	b.Packaged = opts.VersionMetadata != "" || len(valuesFiles) > 0
	if opts.UpToDate != nil && opts.UpToDate(b.Name, b.Version) {
		b.UpToDate, b.ValuesFiles = true, valuesFiles
		return b, nil
	}
	data, err := r.Download(ctx, cv, opts.Limits)
	if err != nil {
		return b, buildErr(ErrChartPull, fmt.Errorf("failed to download chart for remote reference: %w", err))
	}
	return b, packageRemote(b, data, cv, valuesFiles, opts)
}

func packageRemote(b *Build, data []byte, cv *repo.ChartVersion, valuesFiles []string, opts RemoteOptions) error {
	ch, err := LoadArchive(data, opts.Limits)
	if err != nil {
		return buildErr(ErrChartPull, err)
	}
	if err := ch.Metadata.Validate(); err != nil {
		return buildErr(ErrChartPull, fmt.Errorf("failed to validate metadata of downloaded chart: %w", err))
	}
	if ch.Name() != b.Name || ch.Metadata.Version != cv.Version {
		return buildErr(ErrChartPull, fmt.Errorf("downloaded chart is '%s' version '%s', the repository announced '%s' version '%s'",
			ch.Name(), ch.Metadata.Version, b.Name, cv.Version))
	}
	if !b.Packaged {
		b.Path, err = writeArchive(data, opts.OutDir, b.FileName())
		return buildErr(ErrChartPull, err)
	}
	ch.Metadata.Version = b.Version
	if len(valuesFiles) > 0 {
		vals, used, err := MergeChartValues(ch, valuesFiles, opts.IgnoreMissingValuesFiles)
		if err != nil {
			return buildErr(ErrValuesFilesMerge, fmt.Errorf("failed to merge chart values: %w", err))
		}
		if _, err := OverwriteValues(ch, vals); err != nil {
			return buildErr(ErrValuesFilesMerge, err)
		}
		b.ValuesFiles = used
	}
	b.Path, err = packageChart(ch, opts.OutDir)
	return buildErr(ErrChartPackage, err)
}
