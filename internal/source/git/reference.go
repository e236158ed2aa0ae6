package git

import (
	"cmp"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/go-git/go-git/v5/plumbing"
)

// DefaultBranch is followed when a Reference names nothing.
const DefaultBranch = "master"

// Reference is what to check out. It has the fields of the API's
// GitRepositoryRef in the same order, so the reconciler converts with
// git.Reference(*spec.Reference). When several fields are set the most
// precise wins: Commit, then Name, then SemVer, then Tag, then Branch;
// Branch still matters next to Commit (the commit must be on it).
type Reference struct {
	Branch string
	Tag    string
	SemVer string
	Name   string
	Commit string
}

// refKind is the field of a Reference that decides what is checked out.
type refKind int

const (
	kindBranch refKind = iota
	kindTag
	kindSemVer
	kindName
	kindCommit
)

// resolvedRef is a validated Reference reduced to the one field that wins.
type resolvedRef struct {
	kind refKind
	// refName is the full reference to fetch: refs/heads/<branch>,
	// refs/tags/<tag>, the Name as given, or for kindCommit the branch (may
	// be empty). Empty for kindSemVer until a tag is chosen.
	refName plumbing.ReferenceName
	// commit is the lower-case SHA for kindCommit.
	commit string
	// constraint is the parsed SemVer for kindSemVer.
	constraint *semver.Constraints
	// display is how errors name the reference.
	display string
}

// resolve validates r and picks the field that wins.
func (r Reference) resolve() (resolvedRef, error) {
	switch {
	case r.Commit != "":
		commit := strings.ToLower(r.Commit)
		if !isSHA1(commit) {
			return resolvedRef{}, invalidf("commit %q is not a full 40-character SHA-1", r.Commit)
		}
		rr := resolvedRef{kind: kindCommit, commit: commit, display: "commit " + commit}
		if r.Branch != "" {
			name, err := branchRef(r.Branch)
			if err != nil {
				return resolvedRef{}, err
			}
			rr.refName = name
			rr.display = "commit " + commit + " on " + string(name)
		}
		return rr, nil
	case r.Name != "":
		name := plumbing.ReferenceName(strings.TrimSuffix(r.Name, peeledSuffix))
		if !strings.HasPrefix(string(name), "refs/") || name.Validate() != nil {
			return resolvedRef{}, invalidf("reference name %q is not a full reference such as refs/heads/main or refs/pull/1/head", r.Name)
		}
		return resolvedRef{kind: kindName, refName: name, display: string(name)}, nil
	case r.SemVer != "":
		c, err := semver.NewConstraint(r.SemVer)
		if err != nil {
			return resolvedRef{}, invalidf("semver constraint %q: %v", r.SemVer, err)
		}
		return resolvedRef{kind: kindSemVer, constraint: c, display: "semver " + r.SemVer}, nil
	case r.Tag != "":
		name := plumbing.NewTagReferenceName(r.Tag)
		if name.Validate() != nil {
			return resolvedRef{}, invalidf("tag %q is not a valid tag name", r.Tag)
		}
		return resolvedRef{kind: kindTag, refName: name, display: string(name)}, nil
	default:
		name, err := branchRef(cmp.Or(r.Branch, DefaultBranch))
		if err != nil {
			return resolvedRef{}, err
		}
		return resolvedRef{kind: kindBranch, refName: name, display: string(name)}, nil
	}
}

func branchRef(branch string) (plumbing.ReferenceName, error) {
	name := plumbing.NewBranchReferenceName(branch)
	if name.Validate() != nil {
		return "", invalidf("branch %q is not a valid branch name", branch)
	}
	return name, nil
}

// peeledSuffix marks the commit an annotated tag points at in a ref
// advertisement ("refs/tags/v1^{}").
const peeledSuffix = "^{}"

func isSHA1(s string) bool {
	if len(s) != 40 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// Revision formats the artifact revision Flux reports for a checkout of
// kind with full reference name ref at commit hash:
//
//	branch, tag, semver, commit with branch: <short name>@sha1:<hash>, where
//	    the short name drops the first two path elements (refs/heads/,
//	    refs/tags/), so branch feature/x gives feature/x@sha1:…
//	name:        <full reference>@sha1:<hash>, e.g. refs/pull/1/head@sha1:…,
//	    and also refs/heads/main@sha1:… (nothing is stripped)
//	commit only: sha1:<hash>
func revision(kind refKind, ref plumbing.ReferenceName, hash string) string {
	digest := "sha1:" + hash
	if ref == "" {
		return digest
	}
	if kind == kindName {
		return string(ref) + "@" + digest
	}
	parts := strings.SplitN(string(ref), "/", 3)
	if len(parts) != 3 {
		return digest
	}
	return parts[2] + "@" + digest
}

// selectSemVer picks, among tag names, the highest version that satisfies
// c. Tags that do not parse as versions are ignored. When two tags parse to
// the same version (v1.2.3 and 1.2.3) the greater name wins, so that the
// choice is the same from a ref advertisement and from a clone. It returns
// the tag name, or "" when none matches.
func selectSemVer(tags []string, c *semver.Constraints) string {
	type candidate struct {
		name string
		v    *semver.Version
	}
	var matched []candidate
	for _, t := range tags {
		v, err := semver.NewVersion(t)
		if err != nil || !c.Check(v) {
			continue
		}
		matched = append(matched, candidate{t, v})
	}
	if len(matched) == 0 {
		return ""
	}
	best := slices.MaxFunc(matched, func(a, b candidate) int {
		if c := a.v.Compare(b.v); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return best.name
}
