package gitprovider

import (
	"context"
	"fmt"
	"net/http"

	"github.com/google/go-github/v75/github"
)

// GitHubDomain is --hostname's default for bootstrap github; its API is
// api.github.com, every other host's is https://HOST/api/v3.
const GitHubDomain = "github.com"

// GitHub is the REST API of github.com or a GitHub Enterprise Server.
type GitHub struct {
	c      *github.Client
	domain string
}

// NewGitHub returns the API of a.Hostname, authenticated with token.
func NewGitHub(a Address, token string) (*GitHub, error) {
	hc, err := a.httpClient()
	if err != nil {
		return nil, err
	}
	c := github.NewClient(hc).WithAuthToken(token)
	if a.Hostname != GitHubDomain {
		if c, err = c.WithEnterpriseURLs(a.origin(), a.origin()); err != nil {
			return nil, fmt.Errorf("github enterprise address: %w", err)
		}
	}
	return &GitHub{c: c, domain: a.Hostname}, nil
}

// Domain implements Host.
func (g *GitHub) Domain() string { return g.domain }

// Repository implements Host.
func (g *GitHub) Repository(ctx context.Context, ref RepoRef) (*Repository, error) {
	r, resp, err := g.c.Repositories.Get(ctx, ref.Owner, ref.Name)
	if err != nil {
		return nil, ghError(resp, err)
	}
	return g.repository(ref, r)
}

// CreateRepository implements Host: in the organization, or with
// Personal in the token user's account.
func (g *GitHub) CreateRepository(ctx context.Context, ref RepoRef, s Settings) (*Repository, error) {
	org := ref.Owner
	if ref.Personal {
		org = "" // POST /user/repos
	}
	r, resp, err := g.c.Repositories.Create(ctx, org, ghSettings(&github.Repository{Name: github.Ptr(ref.Name)}, s))
	if err != nil {
		return nil, ghError(resp, err)
	}
	return g.repository(ref, r)
}

// UpdateRepository implements Host.
func (g *GitHub) UpdateRepository(ctx context.Context, repo *Repository, s Settings) (*Repository, error) {
	r, resp, err := g.c.Repositories.Edit(ctx, repo.Ref.Owner, repo.Ref.Name, ghSettings(&github.Repository{}, s))
	if err != nil {
		return nil, ghError(resp, err)
	}
	return g.repository(repo.Ref, r)
}

func ghSettings(r *github.Repository, s Settings) *github.Repository {
	if s.Visibility != "" {
		r.Private = github.Ptr(s.Visibility == "private")
		r.Visibility = github.Ptr(s.Visibility)
	}
	if s.Description != "" {
		r.Description = github.Ptr(s.Description)
	}
	if s.DefaultBranch != "" {
		r.DefaultBranch = github.Ptr(s.DefaultBranch)
	}
	return r
}

func (g *GitHub) repository(ref RepoRef, r *github.Repository) (*Repository, error) {
	ssh, err := SSHURL(r.GetSSHURL(), "")
	if err != nil {
		return nil, err
	}
	vis := r.GetVisibility()
	if vis == "" {
		vis = "public"
		if r.GetPrivate() {
			vis = "private"
		}
	}
	return &Repository{
		Ref: ref, ID: r.GetID(), HTTPURL: r.GetCloneURL(), SSHURL: ssh, WebURL: r.GetHTMLURL(),
		Visibility: vis, Description: r.GetDescription(), DefaultBranch: r.GetDefaultBranch(),
	}, nil
}

// TeamPermission implements Host from the repository's teams.
func (g *GitHub) TeamPermission(ctx context.Context, repo *Repository, team string) (string, error) {
	opts := &github.ListOptions{PerPage: 100}
	for {
		teams, resp, err := g.c.Repositories.ListTeams(ctx, repo.Ref.Owner, repo.Ref.Name, opts)
		if err != nil {
			return "", ghError(resp, err)
		}
		for _, t := range teams {
			if t.GetSlug() == team {
				return t.GetPermission(), nil
			}
		}
		if resp.NextPage == 0 {
			return "", nil
		}
		opts.Page = resp.NextPage
	}
}

// GrantTeam implements Host: the team is the organization's, by slug.
func (g *GitHub) GrantTeam(ctx context.Context, repo *Repository, team, permission string) error {
	resp, err := g.c.Teams.AddTeamRepoBySlug(ctx, repo.Ref.Owner, team, repo.Ref.Owner, repo.Ref.Name,
		&github.TeamAddTeamRepoOptions{Permission: permission})
	return ghError(resp, err)
}

// DeployKeys implements Host.
func (g *GitHub) DeployKeys(ctx context.Context, repo *Repository) ([]DeployKey, error) {
	var out []DeployKey
	opts := &github.ListOptions{PerPage: 100}
	for {
		keys, resp, err := g.c.Repositories.ListKeys(ctx, repo.Ref.Owner, repo.Ref.Name, opts)
		if err != nil {
			return nil, ghError(resp, err)
		}
		for _, k := range keys {
			out = append(out, DeployKey{ID: k.GetID(), Title: k.GetTitle(), Key: k.GetKey(), ReadOnly: k.GetReadOnly()})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// AddDeployKey implements Host.
func (g *GitHub) AddDeployKey(ctx context.Context, repo *Repository, key DeployKey) error {
	_, resp, err := g.c.Repositories.CreateKey(ctx, repo.Ref.Owner, repo.Ref.Name,
		&github.Key{Title: github.Ptr(key.Title), Key: github.Ptr(key.Key), ReadOnly: github.Ptr(key.ReadOnly)})
	return ghError(resp, err)
}

// DeleteDeployKey implements Host.
func (g *GitHub) DeleteDeployKey(ctx context.Context, repo *Repository, key DeployKey) error {
	resp, err := g.c.Repositories.DeleteKey(ctx, repo.Ref.Owner, repo.Ref.Name, key.ID)
	return ghError(resp, err)
}

// ghError marks a 404 as ErrNotFound.
func ghError(resp *github.Response, err error) error {
	if err == nil {
		return nil
	}
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}
