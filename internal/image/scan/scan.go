package scan

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/weir-gitops/weir/internal/source/oci"
)

// LatestTagsCount is how many tags status.lastScanResult.latestTags shows,
// as in Flux.
const LatestTagsCount = 10

// ParseImage parses spec.image as Flux does: no URL scheme, no tag or
// digest; insecure allows plain HTTP. The repository's String() is the
// canonical image name (index.docker.io/library/alpine for alpine).
func ParseImage(image string, insecure bool) (name.Repository, error) {
	if scheme, _, ok := strings.Cut(image, "://"); ok {
		return name.Repository{}, fmt.Errorf(".spec.image value should not start with URL scheme; remove '%s://'", scheme)
	}
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	ref, err := name.ParseReference(image, opts...)
	if err != nil {
		return name.Repository{}, err
	}
	rest := strings.TrimPrefix(image, ref.Context().RegistryStr())
	if _, digest, ok := strings.Cut(rest, "@"); ok {
		return name.Repository{}, fmt.Errorf(".spec.image value should not contain a digest; remove '@%s'", digest)
	}
	if _, tag, ok := strings.Cut(rest, ":"); ok {
		return name.Repository{}, fmt.Errorf(".spec.image value should not contain a tag; remove ':%s'", tag)
	}
	return ref.Context(), nil
}

// Options say how to reach the registry.
type Options struct {
	oci.Options
	// Timeout bounds the whole listing (spec.timeout).
	Timeout time.Duration
	// PageSize is the number of tags asked for per page; 0 lets the
	// registry choose (go-containerregistry asks for 1000).
	PageSize int
}

// List returns every tag of repo, page after page.
func List(ctx context.Context, repo name.Repository, o Options) ([]string, error) {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	opts := remoteOptions(ctx, o)
	if o.PageSize > 0 {
		opts = append(opts, remote.WithPageSize(o.PageSize))
	}
	tags, err := remote.List(repo, opts...)
	if err != nil {
		return nil, oci.Classify(ctx, err, "", repo.String())
	}
	return tags, nil
}

// Exclude drops the tags any of patterns matches and returns the rest,
// sorted in Flux's order (see Sort).
func Exclude(tags, patterns []string) ([]string, error) {
	res := make([]*regexp.Regexp, 0, len(patterns))
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("failed to compile regex %s: %w", p, err)
		}
		res = append(res, re)
	}
	kept := make([]string, 0, len(tags))
	for _, t := range tags {
		if !slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(t) }) {
			kept = append(kept, t)
		}
	}
	Sort(kept)
	return kept, nil
}

// Sort orders tags as Flux stores them: descending by byte value.
func Sort(tags []string) {
	slices.SortStableFunc(tags, func(a, b string) int { return strings.Compare(b, a) })
}

// Latest is the first LatestTagsCount of tags (sorted), copied; nil when
// there are none.
func Latest(tags []string) []string {
	if len(tags) == 0 {
		return nil
	}
	return slices.Clone(tags[:min(len(tags), LatestTagsCount)])
}

// Cap keeps the limit greatest of tags (sorted by Sort) in version order
// (CompareNatural) when there are more, and returns them sorted by Sort;
// dropped is how many were left out. limit <= 0 keeps everything.
func Cap(tags []string, limit int) (kept []string, dropped int) {
	if limit <= 0 || len(tags) <= limit {
		return tags, 0
	}
	natural := slices.Clone(tags)
	slices.SortStableFunc(natural, func(a, b string) int { return CompareNatural(b, a) })
	kept = natural[:limit]
	Sort(kept)
	return kept, len(tags) - limit
}

// CompareNatural compares a and b with runs of digits read as numbers:
// "v10.0.0" > "v9.9.9", "build-20240102" > "build-20231231". Otherwise it is
// byte order; it returns -1, 0 or 1.
func CompareNatural(a, b string) int {
	for a != "" && b != "" {
		da, db := isDigit(a[0]), isDigit(b[0])
		if da && db {
			na, ra := digits(a)
			nb, rb := digits(b)
			if c := compareNumbers(na, nb); c != 0 {
				return c
			}
			a, b = ra, rb
			continue
		}
		if a[0] != b[0] {
			if a[0] < b[0] {
				return -1
			}
			return 1
		}
		a, b = a[1:], b[1:]
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digits splits s after its leading run of digits.
func digits(s string) (string, string) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

// compareNumbers compares two decimal strings by value, then by length
// (so "007" and "7" differ, the shorter first).
func compareNumbers(a, b string) int {
	ta, tb := strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(ta) != len(tb) {
		if len(ta) < len(tb) {
			return -1
		}
		return 1
	}
	if c := strings.Compare(ta, tb); c != 0 {
		return c
	}
	return strings.Compare(b, a)
}
