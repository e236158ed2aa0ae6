package gitprovider

import (
	"context"
	"fmt"
	"net/http"

	"code.gitea.io/sdk/gitea"
)

// GiteaDomain is --hostname's default for bootstrap gitea.
const GiteaDomain = "gitea.com"

// Gitea is the v1 REST API of a Gitea (or Forgejo) server.
type Gitea struct {
	c      *gitea.Client
	domain string
}

// NewGitea returns the API of a.Hostname, authenticated with token. The
// server's version is not asked for, so building costs no request.
func NewGitea(ctx context.Context, a Address, token string) (*Gitea, error) {
	hc, err := a.httpClient()
	if err != nil {
		return nil, err
	}
	c, err := gitea.NewClient(a.origin(), gitea.SetToken(token), gitea.SetHTTPClient(hc),
		gitea.SetGiteaVersion(""), gitea.SetContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("gitea client: %w", err)
	}
	return &Gitea{c: c, domain: a.Hostname}, nil
}

// Domain implements Host.
func (g *Gitea) Domain() string { return g.domain }

// Repository implements Host.
func (g *Gitea) Repository(_ context.Context, ref RepoRef) (*Repository, error) {
	r, resp, err := g.c.GetRepo(ref.Owner, ref.Name)
	if err != nil {
		return nil, giteaError(resp, err)
	}
	return giteaRepository(ref, r)
}

// CreateRepository implements Host.
func (g *Gitea) CreateRepository(_ context.Context, ref RepoRef, s Settings) (*Repository, error) {
	opt := gitea.CreateRepoOption{Name: ref.Name, Description: s.Description, Private: s.Visibility != "public",
		DefaultBranch: s.DefaultBranch}
	var r *gitea.Repository
	var resp *gitea.Response
	var err error
	if ref.Personal {
		r, resp, err = g.c.CreateRepo(opt)
	} else {
		r, resp, err = g.c.CreateOrgRepo(ref.Owner, opt)
	}
	if err != nil {
		return nil, giteaError(resp, err)
	}
	return giteaRepository(ref, r)
}

// UpdateRepository implements Host.
func (g *Gitea) UpdateRepository(_ context.Context, repo *Repository, s Settings) (*Repository, error) {
	var opt gitea.EditRepoOption
	if s.Visibility != "" {
		opt.Private = gitea.OptionalBool(s.Visibility != "public")
	}
	if s.Description != "" {
		opt.Description = gitea.OptionalString(s.Description)
	}
	if s.DefaultBranch != "" {
		opt.DefaultBranch = gitea.OptionalString(s.DefaultBranch)
	}
	r, resp, err := g.c.EditRepo(repo.Ref.Owner, repo.Ref.Name, opt)
	if err != nil {
		return nil, giteaError(resp, err)
	}
	return giteaRepository(repo.Ref, r)
}

func giteaRepository(ref RepoRef, r *gitea.Repository) (*Repository, error) {
	ssh, err := SSHURL(r.SSHURL, "")
	if err != nil {
		return nil, err
	}
	vis := "public"
	if r.Private {
		vis = "private"
	}
	return &Repository{Ref: ref, ID: r.ID, HTTPURL: r.CloneURL, SSHURL: ssh, WebURL: r.HTMLURL,
		Visibility: vis, Description: r.Description, DefaultBranch: r.DefaultBranch}, nil
}

// TeamPermission implements Host. A Gitea team's permission is the
// team's own, the same on all its repositories.
func (g *Gitea) TeamPermission(_ context.Context, repo *Repository, team string) (string, error) {
	t, resp, err := g.c.CheckRepoTeam(repo.Ref.Owner, repo.Ref.Name, team)
	if err != nil {
		return "", giteaError(resp, err)
	}
	if t == nil {
		return "", nil
	}
	return giteaPermission(t.Permission), nil
}

// giteaPermission maps a team's access mode to flux's names.
func giteaPermission(m gitea.AccessMode) string {
	switch m {
	case gitea.AccessModeRead:
		return "pull"
	case gitea.AccessModeWrite:
		return "push"
	case gitea.AccessModeAdmin, gitea.AccessModeOwner:
		return "admin"
	default:
		return string(m)
	}
}

// GrantTeam implements Host: the team is added to the repository with
// the access it has (Gitea has no per-repository team permission).
func (g *Gitea) GrantTeam(_ context.Context, repo *Repository, team, _ string) error {
	resp, err := g.c.AddRepoTeam(repo.Ref.Owner, repo.Ref.Name, team)
	return giteaError(resp, err)
}

// DeployKeys implements Host.
func (g *Gitea) DeployKeys(_ context.Context, repo *Repository) ([]DeployKey, error) {
	var out []DeployKey
	for page := 1; ; page++ {
		keys, resp, err := g.c.ListDeployKeys(repo.Ref.Owner, repo.Ref.Name,
			gitea.ListDeployKeysOptions{ListOptions: gitea.ListOptions{Page: page, PageSize: 50}})
		if err != nil {
			return nil, giteaError(resp, err)
		}
		for _, k := range keys {
			out = append(out, DeployKey{ID: k.ID, Title: k.Title, Key: k.Key, ReadOnly: k.ReadOnly})
		}
		if len(keys) < 50 {
			return out, nil
		}
	}
}

// AddDeployKey implements Host.
func (g *Gitea) AddDeployKey(_ context.Context, repo *Repository, key DeployKey) error {
	_, resp, err := g.c.CreateDeployKey(repo.Ref.Owner, repo.Ref.Name,
		gitea.CreateKeyOption{Title: key.Title, Key: key.Key, ReadOnly: key.ReadOnly})
	return giteaError(resp, err)
}

// DeleteDeployKey implements Host.
func (g *Gitea) DeleteDeployKey(_ context.Context, repo *Repository, key DeployKey) error {
	resp, err := g.c.DeleteDeployKey(repo.Ref.Owner, repo.Ref.Name, key.ID)
	return giteaError(resp, err)
}

// giteaError adds the answer's status, and marks a 404 as ErrNotFound.
func giteaError(resp *gitea.Response, err error) error {
	if err == nil {
		return nil
	}
	if resp == nil || resp.Response == nil {
		return err
	}
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %s: %w", ErrNotFound, resp.Status, err)
	}
	return fmt.Errorf("%s: %w", resp.Status, err)
}
