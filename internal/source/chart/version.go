package chart

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// ResolveVersion picks the chart version of name that version asks for,
// by Flux's rules: an exact match of the string first; otherwise the
// highest version satisfying the semver constraint ("" and "*" mean the
// latest stable release; prereleases match only constraints that name
// one), ties between versions differing only in build metadata going to
// the most recently created. Versions that are not strict semver (a
// leading "v" allowed) are skipped. The index is only read, so a cached
// index can be shared.
//
// Helm's IndexFile.Get is not used: it depends on the entries being
// sorted in place, takes the first match without the creation tie-break,
// and words its errors differently from Flux.
func ResolveVersion(index *repo.IndexFile, name, version string) (*repo.ChartVersion, error) {
	versions, ok := index.Entries[name]
	if !ok {
		return nil, repo.ErrNoChartName
	}
	if len(versions) == 0 {
		return nil, repo.ErrNoChartVersion
	}
	if version != "" {
		for _, cv := range versions {
			if cv.Version == version {
				return cv, nil
			}
		}
	}
	constraint, err := Constraint(version)
	if err != nil {
		return nil, err
	}
	best, _ := highest(versions, constraint)
	if best == nil {
		return nil, fmt.Errorf("no '%s' chart with version matching '%s' found", name, version)
	}
	return best, nil
}

// Constraint parses a spec.version: "" and "*" are "*".
func Constraint(version string) (*semver.Constraints, error) {
	if version == "" {
		version = "*"
	}
	c, err := semver.NewConstraint(version)
	if err != nil {
		return nil, fmt.Errorf("invalid version constraint '%s': %w", version, err)
	}
	return c, nil
}

// highest returns the greatest version satisfying c, and its parse.
func highest(versions repo.ChartVersions, c *semver.Constraints) (*repo.ChartVersion, *semver.Version) {
	var (
		best   *repo.ChartVersion
		bestSV *semver.Version
	)
	for _, cv := range versions {
		v, err := ParseVersion(cv.Version)
		if err != nil || !c.Check(v) {
			continue
		}
		if best == nil {
			best, bestSV = cv, v
			continue
		}
		switch cmp := v.Compare(bestSV); {
		case cmp > 0, cmp == 0 && cv.Created.After(best.Created):
			best, bestSV = cv, v
		}
	}
	return best, bestSV
}

// ParseVersion is Flux's: strict semver, with an optional leading "v"
// (which the returned version does not keep; comparisons ignore it).
func ParseVersion(v string) (*semver.Version, error) {
	return semver.StrictNewVersion(strings.TrimPrefix(v, "v"))
}
