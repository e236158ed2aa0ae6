package oci

import (
	"cmp"
	"regexp"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// URLPrefix is the scheme every OCIRepository URL starts with.
const URLPrefix = "oci://"

// DefaultTag is pulled when a Reference names nothing.
const DefaultTag = "latest"

// ParseURL reads an oci://host/repository URL. insecure allows plain HTTP
// (name.Insecure); loopback and private addresses get HTTP anyway, as
// go-containerregistry decides.
func ParseURL(rawURL string, insecure bool) (name.Repository, error) {
	rest, ok := strings.CutPrefix(rawURL, URLPrefix)
	rest = strings.TrimRight(rest, "/")
	if !ok {
		return name.Repository{}, invalidf("URL must be in format 'oci://<domain>/<org>/<repo>'")
	}
	host, repoPath, ok := strings.Cut(rest, "/")
	if !ok || host == "" || repoPath == "" {
		return name.Repository{}, invalidf("URL must name a repository, as in 'oci://<domain>/<org>/<repo>'")
	}
	if i := strings.IndexAny(repoPath, "@:"); i >= 0 {
		return name.Repository{}, invalidf("URL must not contain a tag or digest; remove '%s' and use spec.ref", repoPath[i:])
	}
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	repo, err := name.NewRepository(rest, opts...)
	if err != nil {
		return name.Repository{}, invalidf("%v", err)
	}
	return repo, nil
}

// Reference is what to pull. It has the fields of the API's
// OCIRepositoryRef in the same order, so the reconciler converts with
// oci.Reference(*spec.Reference).
type Reference struct {
	Digest       string
	SemVer       string
	SemverFilter string
	Tag          string
}

// refKind is the field of a Reference that decides what is pulled.
type refKind int

const (
	kindTag refKind = iota
	kindSemVer
	kindDigest
)

// target is a validated Reference reduced to the field that wins.
type target struct {
	kind refKind
	// tag for kindTag; digest ("sha256:<hex>") for kindDigest.
	value string
	// constraint and filter for kindSemVer; filter may be nil.
	constraint *semver.Constraints
	filter     *regexp.Regexp
}

// resolve validates r and picks the field that wins: Digest, then SemVer,
// then Tag, then the latest tag.
func (r Reference) resolve() (target, error) {
	switch {
	case r.Digest != "":
		h, err := v1.NewHash(r.Digest)
		if err != nil {
			return target{}, invalidf("digest '%s' is not of the form sha256:<hex>: %v", r.Digest, err)
		}
		return target{kind: kindDigest, value: h.String()}, nil
	case r.SemVer != "":
		c, err := semver.NewConstraint(r.SemVer)
		if err != nil {
			return target{}, &TagError{Err: invalidf("semver '%s' parse error: %v", r.SemVer, err)}
		}
		t := target{kind: kindSemVer, value: r.SemVer, constraint: c}
		if r.SemverFilter != "" {
			if t.filter, err = regexp.Compile(r.SemverFilter); err != nil {
				return target{}, &TagError{Err: invalidf("semverFilter '%s' is not a valid regular expression: %v", r.SemverFilter, err)}
			}
		}
		return t, nil
	default:
		tag := cmp.Or(r.Tag, DefaultTag)
		if _, err := name.NewTag("example.com/x:"+tag, name.StrictValidation); err != nil {
			return target{}, invalidf("tag '%s' is not a valid tag", tag)
		}
		return target{kind: kindTag, value: tag}, nil
	}
}

// pickSemVer returns the highest tag that passes t's filter and satisfies
// its constraint. Tags must be strict semantic versions, with an optional
// "v"; of two tags with the same version the greater name wins.
func pickSemVer(tags []string, t target) (string, bool) {
	var best *semver.Version
	for _, tag := range tags {
		if t.filter != nil && !t.filter.MatchString(tag) {
			continue
		}
		v, err := ParseVersion(tag)
		if err != nil || !t.constraint.Check(v) {
			continue
		}
		if best == nil {
			best = v
			continue
		}
		if c := v.Compare(best); c > 0 || (c == 0 && v.Original() > best.Original()) {
			best = v
		}
	}
	if best == nil {
		return "", false
	}
	return best.Original(), true
}

// ParseVersion is semver.StrictNewVersion that also accepts a leading "v"
// (fluxcd/pkg version.ParseVersion), for the tags semver policies consider.
func ParseVersion(tag string) (*semver.Version, error) {
	if _, err := semver.StrictNewVersion(strings.TrimPrefix(tag, "v")); err != nil {
		return nil, err
	}
	return semver.NewVersion(tag)
}

// revision is Flux's revision string: <tag>@<digest>, or the digest alone
// when the reference was a digest (tag "").
func revision(tag, digest string) string {
	if tag == "" {
		return digest
	}
	return tag + "@" + digest
}
