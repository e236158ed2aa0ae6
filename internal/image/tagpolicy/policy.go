package tagpolicy

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/internal/source/oci"
)

// ErrInvalid means the policy cannot work as written: every error of New
// matches it with errors.Is.
var ErrInvalid = errors.New("invalid policy")

// invalidError is an error of New, in Flux's words.
type invalidError struct{ err error }

func (e invalidError) Error() string        { return e.err.Error() }
func (e invalidError) Unwrap() error        { return e.err }
func (e invalidError) Is(target error) bool { return target == ErrInvalid }

// Policy is a compiled ImagePolicy spec.
type Policy struct {
	filter  *regexp.Regexp
	extract string
	order   func([]string) (string, error)
}

// New compiles the policy and filterTags of an ImagePolicy. Errors match
// ErrInvalid.
func New(choice imagev1.ImagePolicyChoice, filter *imagev1.TagFilter) (*Policy, error) {
	p := &Policy{}
	var err error
	switch {
	case choice.SemVer != nil:
		p.order, err = semverOrder(choice.SemVer.Range)
	case choice.Alphabetical != nil:
		p.order, err = alphabeticalOrder(choice.Alphabetical.Order)
	case choice.Numerical != nil:
		p.order, err = numericalOrder(choice.Numerical.Order)
	default:
		err = errors.New("given ImagePolicyChoice object is invalid")
	}
	if err != nil {
		return nil, invalidError{fmt.Errorf("invalid policy: %w", err)}
	}
	if filter != nil && filter.Pattern != "" {
		if p.filter, err = regexp.Compile(filter.Pattern); err != nil {
			return nil, invalidError{fmt.Errorf("failed to filter tags: invalid regular expression pattern '%s': %w", filter.Pattern, err)}
		}
		p.extract = filter.Extract
	}
	return p, nil
}

// Latest elects one of tags and returns it as listed (never the extracted
// value).
func (p *Policy) Latest(tags []string) (string, error) {
	candidates, original := p.apply(tags)
	if len(candidates) == 0 {
		return "", errors.New("version list argument cannot be empty")
	}
	latest, err := p.order(candidates)
	if err != nil {
		return "", err
	}
	return original[latest], nil
}

// apply filters and extracts, keeping for each candidate the tag it came
// from. Two tags extracting to the same value keep the first in tags.
func (p *Policy) apply(tags []string) ([]string, map[string]string) {
	original := make(map[string]string, len(tags))
	candidates := make([]string, 0, len(tags))
	for _, tag := range tags {
		value := tag
		if p.filter != nil {
			m := p.filter.FindStringSubmatchIndex(tag)
			if m == nil {
				continue
			}
			if p.extract != "" {
				value = string(p.filter.ExpandString(nil, p.extract, tag, m))
			}
		}
		if _, seen := original[value]; seen {
			continue
		}
		original[value] = tag
		candidates = append(candidates, value)
	}
	return candidates, original
}

func semverOrder(r string) (func([]string) (string, error), error) {
	c, err := semver.NewConstraint(r)
	if err != nil {
		return nil, err
	}
	return func(tags []string) (string, error) {
		var best *semver.Version
		for _, t := range tags {
			v, err := oci.ParseVersion(t)
			if err != nil || !c.Check(v) {
				continue
			}
			if best == nil || v.GreaterThan(best) || (v.Equal(best) && v.Original() > best.Original()) {
				best = v
			}
		}
		if best == nil {
			return "", errors.New("unable to determine latest version from provided list")
		}
		return best.Original(), nil
	}, nil
}

// order normalises asc|desc (any case, default asc).
func order(o string) (bool, error) {
	switch strings.ToLower(o) {
	case "", imagev1.OrderAsc:
		return true, nil
	case imagev1.OrderDesc:
		return false, nil
	}
	return false, fmt.Errorf("invalid order argument provided: '%s', must be one of: %s, %s",
		strings.ToUpper(o), strings.ToUpper(imagev1.OrderAsc), strings.ToUpper(imagev1.OrderDesc))
}

func alphabeticalOrder(o string) (func([]string) (string, error), error) {
	asc, err := order(o)
	if err != nil {
		return nil, err
	}
	return func(tags []string) (string, error) {
		if asc {
			return slices.Max(tags), nil
		}
		return slices.Min(tags), nil
	}, nil
}

func numericalOrder(o string) (func([]string) (string, error), error) {
	asc, err := order(o)
	if err != nil {
		return nil, err
	}
	return func(tags []string) (string, error) {
		var latest string
		var best float64
		for i, t := range tags {
			v, err := strconv.ParseFloat(t, 64)
			if err != nil {
				return "", fmt.Errorf("failed to parse invalid numeric value '%s'", t)
			}
			if i == 0 || (asc && v > best) || (!asc && v < best) {
				latest, best = t, v
			}
		}
		return latest, nil
	}, nil
}
