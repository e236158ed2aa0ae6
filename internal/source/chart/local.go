package chart

import (
	"context"
	"fmt"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
)

// LocalOptions says what to build from a source tree.
type LocalOptions struct {
	// Root is the extracted source artifact; Path the chart in it (a
	// directory, or a packaged .tgz).
	Root, Path string
	// ValuesFiles, relative to Root, are merged in order into values.yaml.
	ValuesFiles              []string
	IgnoreMissingValuesFiles bool
	// VersionMetadata is set on the chart version (see VersionMetadata).
	VersionMetadata string
	// Repositories resolves remote dependencies; nil refuses them.
	Repositories Repositories
	Limits       Limits
	// UpToDate, when set, is asked with the chart's name and final version
	// before anything is packaged; true ends the build there.
	UpToDate func(name, version string) bool
	// OutDir receives the packaged chart.
	OutDir string
}

// BuildLocal builds the chart at opts.Path in a source tree: it loads it
// (directory or archive) within the limits, stamps the version, merges the
// values files, resolves missing dependencies and packages it. An archive
// without values files or version metadata is taken as is.
func BuildLocal(ctx context.Context, opts LocalOptions) (*Build, error) {
	full, err := SecurePath(opts.Root, opts.Path)
	if err != nil {
		return nil, buildErr(ErrChartReference, err)
	}
	archive := isArchive(full)
	ch, data, err := loadLocal(opts, full, archive)
	if err != nil {
		return nil, buildErr(ErrChartReference, err)
	}
	b := &Build{Name: ch.Name()}
	if b.Version, err = WithMetadata(ch.Metadata.Version, opts.VersionMetadata); err != nil {
		return b, buildErr(ErrChartMetadataPatch, err)
	}
	valuesFiles := EffectiveValuesFiles(opts.ValuesFiles)
	b.Packaged = !archive || opts.VersionMetadata != "" || len(valuesFiles) > 0
	if opts.UpToDate != nil && opts.UpToDate(b.Name, b.Version) {
		b.UpToDate, b.ValuesFiles = true, valuesFiles
		return b, nil
	}
	if !b.Packaged {
		b.Path, err = writeArchive(data, opts.OutDir, b.FileName())
		return b, buildErr(ErrChartPull, err)
	}
	ch.Metadata.Version = b.Version
	if len(valuesFiles) > 0 {
		vals, used, err := MergeValuesFiles(opts.Root, valuesFiles, opts.IgnoreMissingValuesFiles, opts.Limits)
		if err != nil {
			return b, buildErr(ErrValuesFilesMerge, err)
		}
		if _, err := OverwriteValues(ch, vals); err != nil {
			return b, buildErr(ErrValuesFilesMerge, err)
		}
		b.ValuesFiles = used
	}
	if !archive {
		deps := &dependencyBuilder{root: opts.Root, chartDir: opts.Path, repos: opts.Repositories, limits: opts.Limits}
		if b.ResolvedDependencies, err = deps.build(ctx, ch); err != nil {
			return b, buildErr(ErrDependencyBuild, err)
		}
	}
	b.Path, err = packageChart(ch, opts.OutDir)
	return b, buildErr(ErrChartPackage, err)
}

func loadLocal(opts LocalOptions, full string, archive bool) (*chartv2.Chart, []byte, error) {
	if !archive {
		ch, err := LoadDir(opts.Root, opts.Path, opts.Limits)
		return ch, nil, err
	}
	data, err := ReadArchiveFile(full, opts.Limits)
	if err != nil {
		return nil, nil, err
	}
	ch, err := LoadArchive(data, opts.Limits)
	if err != nil {
		return nil, nil, err
	}
	if err := ch.Metadata.Validate(); err != nil {
		return nil, nil, fmt.Errorf("invalid chart metadata: %w", err)
	}
	return ch, data, nil
}
