package chart

import (
	"context"
	"fmt"
	"path"
	"strings"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// Repository serves the charts of one repository: an HTTP repository's
// index, or an OCI registry's tags.
type Repository interface {
	// Resolve picks the version of name that the constraint version asks
	// for (see ResolveVersion).
	Resolve(ctx context.Context, name, version string) (*repo.ChartVersion, error)
	// Download fetches cv's chart archive within l.
	Download(ctx context.Context, cv *repo.ChartVersion, l Limits) ([]byte, error)
}

// Repositories finds the Repository behind a dependency's repository URL
// (http(s):// or oci://), with whatever credentials belong to it.
type Repositories func(ctx context.Context, url string) (Repository, error)

// dependencyBuilder adds to a chart loaded from a directory the
// dependencies its charts/ directory lacks.
type dependencyBuilder struct {
	root     string // source root, resolved
	chartDir string // the chart's path in root, slash-separated
	repos    Repositories
	limits   Limits
}

// build resolves the missing dependencies of ch, the locked versions of
// Chart.lock when there is one, and returns how many it added.
func (b *dependencyBuilder) build(ctx context.Context, ch *chartv2.Chart) (int, error) {
	reqs := ch.Metadata.Dependencies
	if ch.Lock != nil {
		reqs = ch.Lock.Dependencies
	}
	present := map[string]bool{}
	for _, d := range ch.Dependencies() {
		present[d.Name()] = true
	}
	added := 0
	for _, dep := range reqs {
		if present[dep.Name] {
			continue
		}
		sub, err := b.fetch(ctx, dep)
		if err != nil {
			return added, err
		}
		ch.AddDependency(sub)
		present[dep.Name] = true
		added++
	}
	return added, nil
}

func (b *dependencyBuilder) fetch(ctx context.Context, dep *chartv2.Dependency) (*chartv2.Chart, error) {
	r := dep.Repository
	switch {
	case r == "":
		return nil, fmt.Errorf("dependency '%s' has no repository and is not in the chart's charts/ directory", dep.Name)
	case strings.HasPrefix(r, "file://"):
		return b.local(dep)
	case strings.HasPrefix(r, "@") || strings.HasPrefix(r, "alias:"):
		return nil, fmt.Errorf("dependency '%s': repository '%s' is a Helm CLI alias, which means nothing in a cluster; use the repository's URL", dep.Name, r)
	case strings.HasPrefix(r, "http://"), strings.HasPrefix(r, "https://"), strings.HasPrefix(r, "oci://"):
		return b.remote(ctx, dep)
	}
	return nil, fmt.Errorf("dependency '%s': unsupported repository '%s'", dep.Name, r)
}

// local loads a file:// dependency, a directory or archive whose path is
// relative to the chart and must stay inside the source root.
func (b *dependencyBuilder) local(dep *chartv2.Dependency) (*chartv2.Chart, error) {
	rel := path.Join(b.chartDir, strings.TrimPrefix(dep.Repository, "file://"))
	p, err := SecurePath(b.root, rel)
	if err != nil {
		return nil, fmt.Errorf("failed to add local dependency '%s': %w", dep.Name, err)
	}
	var sub *chartv2.Chart
	if isArchive(p) {
		data, err := ReadArchiveFile(p, b.limits)
		if err == nil {
			sub, err = LoadArchive(data, b.limits)
		}
		if err != nil {
			return nil, fmt.Errorf("failed to add local dependency '%s': %w", dep.Name, err)
		}
	} else if sub, err = LoadDir(b.root, rel, b.limits); err != nil {
		return nil, fmt.Errorf("failed to add local dependency '%s': %w", dep.Name, err)
	}
	if err := checkDependencyVersion(dep, sub); err != nil {
		return nil, err
	}
	return sub, nil
}

func checkDependencyVersion(dep *chartv2.Dependency, sub *chartv2.Chart) error {
	if dep.Version == "" {
		return nil
	}
	c, err := Constraint(dep.Version)
	if err != nil {
		return fmt.Errorf("dependency '%s': %w", dep.Name, err)
	}
	v, err := ParseVersion(sub.Metadata.Version)
	if err != nil || !c.Check(v) {
		return fmt.Errorf("can't get a valid version for dependency '%s': version '%s' does not satisfy '%s'",
			dep.Name, sub.Metadata.Version, dep.Version)
	}
	return nil
}

// remote resolves and downloads a dependency from its repository.
func (b *dependencyBuilder) remote(ctx context.Context, dep *chartv2.Dependency) (*chartv2.Chart, error) {
	if b.repos == nil {
		return nil, fmt.Errorf("failed to add remote dependency '%s': no repository lookup configured", dep.Name)
	}
	r, err := b.repos(ctx, dep.Repository)
	if err != nil {
		return nil, fmt.Errorf("failed to add remote dependency '%s': %w", dep.Name, err)
	}
	cv, err := r.Resolve(ctx, dep.Name, dep.Version)
	if err != nil {
		return nil, fmt.Errorf("failed to add remote dependency '%s': %w", dep.Name, err)
	}
	data, err := r.Download(ctx, cv, b.limits)
	if err != nil {
		return nil, fmt.Errorf("failed to add remote dependency '%s': %w", dep.Name, err)
	}
	sub, err := LoadArchive(data, b.limits)
	if err != nil {
		return nil, fmt.Errorf("failed to add remote dependency '%s': %w", dep.Name, err)
	}
	return sub, nil
}
