package gitprovider

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	gitlab "gitlab.com/gitlab-org/api/client-go/v2"
)

// GitLabDomain is --hostname's default for bootstrap gitlab.
const GitLabDomain = "gitlab.com"

// GitLab is the v4 REST API of gitlab.com or a self-managed GitLab. Its
// repositories are projects, in a group (Owner, subgroups included) or,
// with Personal, in the token user's namespace; teams are groups the
// project is shared with.
type GitLab struct {
	c      *gitlab.Client
	domain string
}

// gitlabLevels maps flux's permission names to GitLab's access levels.
var gitlabLevels = map[string]gitlab.AccessLevelValue{
	"pull":     gitlab.GuestPermissions,
	"triage":   gitlab.ReporterPermissions,
	"push":     gitlab.DeveloperPermissions,
	"maintain": gitlab.MaintainerPermissions,
	"admin":    gitlab.OwnerPermissions,
}

// NewGitLab returns the API of a.Hostname, authenticated with token
// (PRIVATE-TOKEN).
func NewGitLab(a Address, token string) (*GitLab, error) {
	hc, err := a.httpClient()
	if err != nil {
		return nil, err
	}
	c, err := gitlab.NewClient(token, gitlab.WithBaseURL(a.origin()+"/api/v4"), gitlab.WithHTTPClient(hc))
	if err != nil {
		return nil, fmt.Errorf("gitlab client: %w", err)
	}
	return &GitLab{c: c, domain: a.Hostname}, nil
}

// Domain implements Host.
func (g *GitLab) Domain() string { return g.domain }

// Repository implements Host.
func (g *GitLab) Repository(ctx context.Context, ref RepoRef) (*Repository, error) {
	p, resp, err := g.c.Projects.GetProject(ref.String(), nil, gitlab.WithContext(ctx))
	if err != nil {
		return nil, gitlabError(resp, err)
	}
	return gitlabRepository(ref, p)
}

// CreateRepository implements Host: in the group Owner names, or with
// Personal in the token user's namespace.
func (g *GitLab) CreateRepository(ctx context.Context, ref RepoRef, s Settings) (*Repository, error) {
	opt := &gitlab.CreateProjectOptions{Name: gitlab.Ptr(ref.Name), Path: gitlab.Ptr(ref.Name)}
	if !ref.Personal {
		group, resp, err := g.c.Groups.GetGroup(ref.Owner, nil, gitlab.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("group %q: %w", ref.Owner, gitlabError(resp, err))
		}
		opt.NamespaceID = gitlab.Ptr(group.ID)
	}
	if s.Visibility != "" {
		opt.Visibility = gitlab.Ptr(gitlab.VisibilityValue(s.Visibility))
	}
	if s.Description != "" {
		opt.Description = gitlab.Ptr(s.Description)
	}
	if s.DefaultBranch != "" {
		opt.DefaultBranch = gitlab.Ptr(s.DefaultBranch)
	}
	p, resp, err := g.c.Projects.CreateProject(opt, gitlab.WithContext(ctx))
	if err != nil {
		return nil, gitlabError(resp, err)
	}
	return gitlabRepository(ref, p)
}

// UpdateRepository implements Host.
func (g *GitLab) UpdateRepository(ctx context.Context, repo *Repository, s Settings) (*Repository, error) {
	var opt gitlab.EditProjectOptions
	if s.Visibility != "" {
		opt.Visibility = gitlab.Ptr(gitlab.VisibilityValue(s.Visibility))
	}
	if s.Description != "" {
		opt.Description = gitlab.Ptr(s.Description)
	}
	if s.DefaultBranch != "" {
		opt.DefaultBranch = gitlab.Ptr(s.DefaultBranch)
	}
	p, resp, err := g.c.Projects.EditProject(repo.ID, &opt, gitlab.WithContext(ctx))
	if err != nil {
		return nil, gitlabError(resp, err)
	}
	return gitlabRepository(repo.Ref, p)
}

func gitlabRepository(ref RepoRef, p *gitlab.Project) (*Repository, error) {
	ssh, err := SSHURL(p.SSHURLToRepo, "")
	if err != nil {
		return nil, err
	}
	return &Repository{Ref: ref, ID: p.ID, HTTPURL: p.HTTPURLToRepo, SSHURL: ssh, WebURL: p.WebURL,
		Visibility: string(p.Visibility), Description: p.Description, DefaultBranch: p.DefaultBranch}, nil
}

// TeamPermission implements Host from the groups the project is shared
// with.
func (g *GitLab) TeamPermission(ctx context.Context, repo *Repository, team string) (string, error) {
	p, resp, err := g.c.Projects.GetProject(repo.ID, nil, gitlab.WithContext(ctx))
	if err != nil {
		return "", gitlabError(resp, err)
	}
	for _, s := range p.SharedWithGroups {
		if strings.EqualFold(s.GroupFullPath, team) || strings.EqualFold(s.GroupName, team) {
			for name, level := range gitlabLevels {
				if int64(level) == s.GroupAccessLevel {
					return name, nil
				}
			}
			return fmt.Sprint(s.GroupAccessLevel), nil
		}
	}
	return "", nil
}

// GrantTeam implements Host: the project is shared with the group.
func (g *GitLab) GrantTeam(ctx context.Context, repo *Repository, team, permission string) error {
	level, ok := gitlabLevels[permission]
	if !ok {
		return fmt.Errorf("permission %q has no GitLab access level", permission)
	}
	group, resp, err := g.c.Groups.GetGroup(team, nil, gitlab.WithContext(ctx))
	if err != nil {
		return gitlabError(resp, err)
	}
	resp, err = g.c.Projects.ShareProjectWithGroup(repo.ID,
		&gitlab.ShareWithGroupOptions{GroupID: gitlab.Ptr(group.ID), GroupAccess: gitlab.Ptr(level)}, gitlab.WithContext(ctx))
	return gitlabError(resp, err)
}

// DeployKeys implements Host.
func (g *GitLab) DeployKeys(ctx context.Context, repo *Repository) ([]DeployKey, error) {
	var out []DeployKey
	opt := &gitlab.ListProjectDeployKeysOptions{ListOptions: gitlab.ListOptions{PerPage: 100, Page: 1}}
	for {
		keys, resp, err := g.c.DeployKeys.ListProjectDeployKeys(repo.ID, opt, gitlab.WithContext(ctx))
		if err != nil {
			return nil, gitlabError(resp, err)
		}
		for _, k := range keys {
			out = append(out, DeployKey{ID: k.ID, Title: k.Title, Key: k.Key, ReadOnly: !k.CanPush})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// AddDeployKey implements Host.
func (g *GitLab) AddDeployKey(ctx context.Context, repo *Repository, key DeployKey) error {
	_, resp, err := g.c.DeployKeys.AddDeployKey(repo.ID, &gitlab.AddDeployKeyOptions{
		Title: gitlab.Ptr(key.Title), Key: gitlab.Ptr(key.Key), CanPush: gitlab.Ptr(!key.ReadOnly),
	}, gitlab.WithContext(ctx))
	return gitlabError(resp, err)
}

// DeleteDeployKey implements Host.
func (g *GitLab) DeleteDeployKey(ctx context.Context, repo *Repository, key DeployKey) error {
	resp, err := g.c.DeployKeys.DeleteDeployKey(repo.ID, key.ID, gitlab.WithContext(ctx))
	return gitlabError(resp, err)
}

// gitlabError marks a 404 as ErrNotFound.
func gitlabError(resp *gitlab.Response, err error) error {
	if err == nil {
		return nil
	}
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}
