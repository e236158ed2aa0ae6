package gitprovider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ErrNotFound is a Host's answer for a repository, team or group that
// does not exist.
var ErrNotFound = errors.New("not found")

// Permissions a team can be given, flux's names (GitHub's); DefaultPermission
// is what a --team without one gets.
var Permissions = []string{"pull", "triage", "push", "maintain", "admin"}

// DefaultPermission is the permission of a team named without one.
const DefaultPermission = "maintain"

// RepoRef names a repository on a host.
type RepoRef struct {
	// Owner is the organization (GitLab: the group path, subgroups
	// included) or, with Personal, the user.
	Owner string
	// Name is the repository's name.
	Name string
	// Personal says Owner is a user, not an organization.
	Personal bool
}

func (r RepoRef) String() string { return r.Owner + "/" + r.Name }

// Settings are what a created repository gets, and what Reconcile
// enforces on an existing one.
type Settings struct {
	// Visibility is "private", "public" or (GitHub Enterprise, GitLab)
	// "internal".
	Visibility string
	// Description and DefaultBranch are left to the host when empty.
	Description   string
	DefaultBranch string
}

// Repository is a repository as the host describes it.
type Repository struct {
	Ref RepoRef
	// ID is the host's numeric id where it has one (GitLab's project).
	ID int64
	// HTTPURL and SSHURL are the host's clone addresses; SSHURL is
	// ssh://user@host[:port]/path, scp-like answers converted.
	HTTPURL, SSHURL string
	// WebURL is the repository's page, what messages show.
	WebURL        string
	Visibility    string
	Description   string
	DefaultBranch string
}

// DeployKey is an SSH key with access to one repository.
type DeployKey struct {
	ID       int64
	Title    string
	Key      string // authorized_keys format: "<type> <base64>[ comment]"
	ReadOnly bool
}

// Host is one Git host's REST API, as bootstrap needs it.
type Host interface {
	// Domain is the host's name for messages ("github.com").
	Domain() string
	// Repository returns the repository, or an error wrapping ErrNotFound.
	Repository(ctx context.Context, ref RepoRef) (*Repository, error)
	CreateRepository(ctx context.Context, ref RepoRef, s Settings) (*Repository, error)
	// UpdateRepository sets s on repo where it differs (--reconcile).
	UpdateRepository(ctx context.Context, repo *Repository, s Settings) (*Repository, error)
	// TeamPermission is the team's access to repo, "" when it has none.
	TeamPermission(ctx context.Context, repo *Repository, team string) (string, error)
	GrantTeam(ctx context.Context, repo *Repository, team, permission string) error
	DeployKeys(ctx context.Context, repo *Repository) ([]DeployKey, error)
	AddDeployKey(ctx context.Context, repo *Repository, key DeployKey) error
	DeleteDeployKey(ctx context.Context, repo *Repository, key DeployKey) error
}

// Logger prints progress; bootstrap.Logger and output.Progress are ones.
type Logger interface {
	Actionf(format string, args ...any)
	Successf(format string, args ...any)
	Warningf(format string, args ...any)
}

// Request is the repository bootstrap wants.
type Request struct {
	Repo     RepoRef
	Settings Settings
	// Teams maps team (GitLab: group path) to permission; "" is
	// DefaultPermission. Ignored for a personal repository.
	Teams map[string]string
	// Reconcile enforces Settings and Teams on an existing repository.
	Reconcile bool
}

// ErrTeams reports that some teams could not be granted access: the
// repository is usable, bootstrap goes on, and the command fails at the
// end, as flux does.
var ErrTeams = errors.New("failed to grant permissions to team")

// EnsureRepository finds or creates the repository, reconciles its
// settings when asked, and grants the teams access. A team that failed
// is logged and reported as an error wrapping ErrTeams next to the
// repository.
func EnsureRepository(ctx context.Context, h Host, log Logger, req Request) (*Repository, error) {
	log.Actionf("connecting to %s", h.Domain())
	repo, err := h.Repository(ctx, req.Repo)
	switch {
	case errors.Is(err, ErrNotFound):
		if repo, err = h.CreateRepository(ctx, req.Repo, req.Settings); err != nil {
			return nil, fmt.Errorf("failed to create new Git repository %q: %w", req.Repo, err)
		}
		log.Successf("repository %q created", repo.WebURL)
	case err != nil:
		return nil, fmt.Errorf("failed to get Git repository %q: %w", req.Repo, err)
	case req.Reconcile && differs(repo, req.Settings):
		if repo, err = h.UpdateRepository(ctx, repo, req.Settings); err != nil {
			return nil, fmt.Errorf("failed to reconcile Git repository %q: %w", req.Repo, err)
		}
		log.Successf("repository %q reconciled", repo.WebURL)
	}
	if req.Repo.Personal || len(req.Teams) == 0 {
		return repo, nil
	}
	return repo, grantTeams(ctx, h, log, repo, req)
}

func grantTeams(ctx context.Context, h Host, log Logger, repo *Repository, req Request) error {
	log.Actionf("reconciling repository permissions")
	var failed error
	for _, team := range slices.Sorted(maps.Keys(req.Teams)) {
		want := req.Teams[team]
		if want == "" {
			want = DefaultPermission
		}
		have, err := h.TeamPermission(ctx, repo, team)
		if err == nil && have != "" && (!req.Reconcile || have == want) {
			continue
		}
		if err == nil {
			err = h.GrantTeam(ctx, repo, team, want)
		}
		if err != nil {
			log.Warningf("failed to grant %q permissions to %q: %v", want, team, err)
			failed = ErrTeams
			continue
		}
		log.Successf("granted %q permissions to %q", want, team)
	}
	log.Successf("reconciled repository permissions")
	return failed
}

// differs reports whether repo lacks a setting s asks for.
func differs(repo *Repository, s Settings) bool {
	return s.Visibility != "" && s.Visibility != repo.Visibility ||
		s.Description != "" && s.Description != repo.Description ||
		s.DefaultBranch != "" && s.DefaultBranch != repo.DefaultBranch
}

// EnsureDeployKey gives key access to repo under its title. A key of
// that title with the same key and access is kept; one that differs is
// deleted and the key added again. It reports whether anything changed.
func EnsureDeployKey(ctx context.Context, h Host, repo *Repository, key DeployKey) (bool, error) {
	keys, err := h.DeployKeys(ctx, repo)
	if err != nil {
		return false, fmt.Errorf("listing the deploy keys of %q: %w", repo.Ref, err)
	}
	for _, k := range keys {
		if k.Title != key.Title {
			continue
		}
		if sameKey(k.Key, key.Key) && k.ReadOnly == key.ReadOnly {
			return false, nil
		}
		if err := h.DeleteDeployKey(ctx, repo, k); err != nil {
			return false, fmt.Errorf("deleting deploy key %q of %q: %w", k.Title, repo.Ref, err)
		}
	}
	if err := h.AddDeployKey(ctx, repo, key); err != nil {
		return false, fmt.Errorf("adding deploy key %q to %q: %w", key.Title, repo.Ref, err)
	}
	return true, nil
}

// sameKey compares two authorized_keys lines by type and key, not
// comment: hosts drop or rewrite the comment.
func sameKey(a, b string) bool {
	fa, fb := strings.Fields(a), strings.Fields(b)
	return len(fa) >= 2 && len(fb) >= 2 && fa[0] == fb[0] && fa[1] == fb[1]
}

// DeployKeyName is the title flux gives the cluster's deploy key:
// <namespace>-<branch>-<secret name>-<sync path>, empty parts skipped,
// the sync path as the Kustomization has it ("./clusters/dev").
func DeployKeyName(namespace, branch, secretName, syncPath string) string {
	var parts []string
	for _, p := range []string{namespace, branch, secretName, syncPath} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "-")
}

// ParseTeams reads the values of --team (or --group, which flag names),
// "name" or "name:permission".
func ParseTeams(flag string, values []string) (map[string]string, error) {
	teams := map[string]string{}
	for _, v := range values {
		name, perm, _ := strings.Cut(v, ":")
		if name == "" {
			return nil, fmt.Errorf("--%s %q names no %s", flag, v, flag)
		}
		if perm != "" && !validPermission(perm) {
			return nil, fmt.Errorf("invalid permission %q for %s %q, can be: %s", perm, flag, name, strings.Join(Permissions, ", "))
		}
		teams[name] = perm
	}
	return teams, nil
}

func validPermission(p string) bool { return slices.Contains(Permissions, p) }
