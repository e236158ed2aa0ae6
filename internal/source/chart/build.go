package chart

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/Masterminds/semver/v3"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
)

// BuildErrorReason is why a build failed: Reason is Flux's condition
// reason, Summary prefixes the message.
type BuildErrorReason struct {
	Reason  string
	Summary string
}

// Flux's build error reasons.
var (
	ErrChartReference     = BuildErrorReason{Reason: "InvalidChartReference", Summary: "invalid chart reference"}
	ErrChartPull          = BuildErrorReason{Reason: "ChartPullError", Summary: "chart pull error"}
	ErrChartMetadataPatch = BuildErrorReason{Reason: "MetadataPatchError", Summary: "chart metadata patch error"}
	ErrValuesFilesMerge   = BuildErrorReason{Reason: "ValuesFilesError", Summary: "values files merge error"}
	ErrDependencyBuild    = BuildErrorReason{Reason: "DependencyBuildError", Summary: "dependency build error"}
	ErrChartPackage       = BuildErrorReason{Reason: "ChartPackageError", Summary: "chart package error"}
	ErrChartVerification  = BuildErrorReason{Reason: "ChartVerificationError", Summary: "chart verification error"}
)

// BuildError is a failed build with its reason.
type BuildError struct {
	Reason BuildErrorReason
	Err    error
}

func (e *BuildError) Error() string { return e.Reason.Summary + ": " + e.Err.Error() }
func (e *BuildError) Unwrap() error { return e.Err }

// Persistent reports whether retrying cannot help until the spec or the
// source changes (Flux stalls on these).
func (e *BuildError) Persistent() bool {
	switch e.Reason {
	case ErrChartReference, ErrChartMetadataPatch, ErrValuesFilesMerge:
		return true
	}
	return false
}

func buildErr(reason BuildErrorReason, err error) error {
	if err == nil {
		return nil
	}
	return &BuildError{Reason: reason, Err: err}
}

// Build is a built (or found up to date) chart.
type Build struct {
	// Name and Version of the chart, the version with any build metadata.
	Name, Version string
	// Path is the packaged chart; empty when UpToDate.
	Path string
	// ValuesFiles are the files merged into values.yaml.
	ValuesFiles []string
	// ResolvedDependencies counts the dependencies fetched or loaded.
	ResolvedDependencies int
	// Packaged is true when the chart was packaged here rather than taken
	// as pulled.
	Packaged bool
	// UpToDate is true when the stored chart already is this build.
	UpToDate bool
	// Digest is the repository's digest of the chart: an OCI chart's
	// manifest digest, an index entry's archive digest; empty from a
	// source tree.
	Digest string
}

// Summary is Flux's message for the build: "pulled|packaged '<name>' chart
// with version '<version>'", and the values files merged.
func (b *Build) Summary() string {
	action := "pulled"
	if b.Packaged {
		action = "packaged"
	}
	s := fmt.Sprintf("%s '%s' chart with version '%s'", action, b.Name, b.Version)
	if len(b.ValuesFiles) > 0 {
		s += fmt.Sprintf(" and merged values files %v", b.ValuesFiles)
	}
	return s
}

// FileName is the artifact's file name, <name>-<version>.tgz.
func (b *Build) FileName() string { return b.Name + "-" + b.Version + ".tgz" }

// WithMetadata returns version with SemVer build metadata set to meta
// (replacing any); meta "" returns version unchanged.
func WithMetadata(version, meta string) (string, error) {
	if meta == "" {
		return version, nil
	}
	v, err := semver.NewVersion(version)
	if err != nil {
		return "", fmt.Errorf("failed to parse version from chart metadata as SemVer: %w", err)
	}
	withMeta, err := v.SetMetadata(meta)
	if err != nil {
		return "", fmt.Errorf("failed to set SemVer metadata on chart version: %w", err)
	}
	return withMeta.String(), nil
}

// packageChart writes ch into outDir with chartutil.Save and returns the
// archive's path.
func packageChart(ch *chartv2.Chart, outDir string) (string, error) {
	p, err := chartutil.Save(ch, outDir)
	if err != nil {
		return "", fmt.Errorf("failed to package chart: %w", err)
	}
	return p, nil
}

// isArchive reports whether the path names a packaged chart rather than
// a directory.
func isArchive(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && (strings.HasSuffix(p, ".tgz") || strings.HasSuffix(p, ".tar.gz"))
}

// writeArchive stores data, a chart archive taken as is, in outDir.
func writeArchive(data []byte, outDir, fileName string) (string, error) {
	p := filepath.Join(outDir, fileName)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		return "", fmt.Errorf("failed to write chart to file: %w", err)
	}
	return p, nil
}
