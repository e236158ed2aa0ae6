package git

import (
	"errors"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"github.com/go-git/go-git/v5/plumbing"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
)

// The reconciler converts the API type directly; this breaks the build if
// the two drift apart.
var _ = Reference(sourcev1.GitRepositoryRef{})

const sha = "0123456789abcdef0123456789abcdef01234567"

func TestRevision(t *testing.T) {
	tests := []struct {
		name string
		kind refKind
		ref  plumbing.ReferenceName
		want string
	}{
		{"branch", kindBranch, "refs/heads/main", "main@sha1:" + sha},
		{"branch with slash", kindBranch, "refs/heads/feature/x", "feature/x@sha1:" + sha},
		{"tag", kindTag, "refs/tags/v1.2.3", "v1.2.3@sha1:" + sha},
		{"tag with slash", kindTag, "refs/tags/release/v1", "release/v1@sha1:" + sha},
		{"semver", kindSemVer, "refs/tags/1.2.3", "1.2.3@sha1:" + sha},
		{"name pull", kindName, "refs/pull/1/head", "refs/pull/1/head@sha1:" + sha},
		{"name heads keeps prefix", kindName, "refs/heads/main", "refs/heads/main@sha1:" + sha},
		{"name tags keeps prefix", kindName, "refs/tags/v1", "refs/tags/v1@sha1:" + sha},
		{"commit only", kindCommit, "", "sha1:" + sha},
		{"commit on branch", kindCommit, "refs/heads/main", "main@sha1:" + sha},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := revision(tt.kind, tt.ref, sha); got != tt.want {
				t.Errorf("revision(%v, %q) = %q, want %q", tt.kind, tt.ref, got, tt.want)
			}
		})
	}
}

func TestReferenceResolve(t *testing.T) {
	tests := []struct {
		name     string
		ref      Reference
		wantKind refKind
		wantRef  plumbing.ReferenceName
		wantErr  string
	}{
		{name: "empty is master", ref: Reference{}, wantKind: kindBranch, wantRef: "refs/heads/master"},
		{name: "branch", ref: Reference{Branch: "main"}, wantKind: kindBranch, wantRef: "refs/heads/main"},
		{name: "tag beats branch", ref: Reference{Branch: "main", Tag: "v1"}, wantKind: kindTag, wantRef: "refs/tags/v1"},
		{name: "semver beats tag", ref: Reference{Tag: "v1", SemVer: ">=1"}, wantKind: kindSemVer},
		{name: "name beats semver", ref: Reference{SemVer: ">=1", Name: "refs/pull/1/head"}, wantKind: kindName, wantRef: "refs/pull/1/head"},
		{name: "commit beats name", ref: Reference{Name: "refs/pull/1/head", Commit: sha}, wantKind: kindCommit},
		{name: "commit keeps branch", ref: Reference{Branch: "dev", Commit: sha}, wantKind: kindCommit, wantRef: "refs/heads/dev"},
		{name: "commit ignores tag", ref: Reference{Tag: "v1", Commit: sha}, wantKind: kindCommit},
		{name: "upper-case commit", ref: Reference{Commit: strings.ToUpper(sha)}, wantKind: kindCommit},
		{name: "peeled name", ref: Reference{Name: "refs/tags/v1^{}"}, wantKind: kindName, wantRef: "refs/tags/v1"},
		{name: "short commit", ref: Reference{Commit: "abc123"}, wantErr: "not a full 40-character SHA-1"},
		{name: "name without refs/", ref: Reference{Name: "main"}, wantErr: "not a full reference"},
		{name: "bad semver", ref: Reference{SemVer: "not a range"}, wantErr: "semver constraint"},
		{name: "bad branch", ref: Reference{Branch: "a..b"}, wantErr: "not a valid branch name"},
		{name: "bad tag", ref: Reference{Tag: "v1~"}, wantErr: "not a valid tag name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rr, err := tt.ref.resolve()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("resolve() error = %v, want ErrInvalidConfig containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("resolve() error = %v", err)
			}
			if rr.kind != tt.wantKind || rr.refName != tt.wantRef {
				t.Errorf("resolve() = kind %v ref %q, want kind %v ref %q", rr.kind, rr.refName, tt.wantKind, tt.wantRef)
			}
			if rr.kind == kindCommit && rr.commit != sha {
				t.Errorf("commit = %q, want %q", rr.commit, sha)
			}
		})
	}
}

func TestSelectSemVer(t *testing.T) {
	tags := []string{"v1.0.0", "1.2.0", "v1.10.0", "latest", "v2.0.0-rc.1", "release-3", "v0.9.0", "1.10.0"}
	tests := []struct {
		constraint string
		want       string
	}{
		{">=1.0.0", "v1.10.0"}, // v1.10.0 and 1.10.0 tie; the greater name wins
		{"<1.10.0", "1.2.0"},
		{"~1.0", "v1.0.0"},
		{"1.x", "v1.10.0"},
		{">=2.0.0-0", "v2.0.0-rc.1"},
		{">=3.0.0", ""},
		{"<1.0.0", "v0.9.0"},
	}
	for _, tt := range tests {
		t.Run(tt.constraint, func(t *testing.T) {
			c, err := semver.NewConstraint(tt.constraint)
			if err != nil {
				t.Fatal(err)
			}
			if got := selectSemVer(tags, c); got != tt.want {
				t.Errorf("selectSemVer(%q) = %q, want %q", tt.constraint, got, tt.want)
			}
		})
	}
}

func TestSparseDirs(t *testing.T) {
	tests := []struct {
		in      []string
		want    []string
		wantErr bool
	}{
		{in: nil, want: nil},
		{in: []string{"deploy"}, want: []string{"deploy/"}},
		{in: []string{"./deploy/", "apps/base"}, want: []string{"deploy/", "apps/base/"}},
		{in: []string{"deploy", "."}, want: nil},
		{in: []string{"../etc"}, wantErr: true},
		{in: []string{"/etc"}, wantErr: true},
		{in: []string{"a/../../b"}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := sparseDirs(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("sparseDirs(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("sparseDirs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
