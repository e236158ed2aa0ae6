package commitstatus

import (
	"context"
	"fmt"

	gitlab "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/weir-gitops/weir/internal/notification/notifier"
)

// gitLab sets statuses through GitLab's v4 API at the address's host, for
// gitlab.com and self-hosted instances alike. The project is the
// address's path ("group/subgroup/project") or a numeric project ID.
type gitLab struct {
	client  *gitlab.Client
	project string
}

func newGitLab(o notifier.Options) (host, error) {
	if err := requireToken(o); err != nil {
		return nil, err
	}
	a, err := parseAddress(o.Address)
	if err != nil {
		return nil, err
	}
	if a.path == "" {
		return nil, fmt.Errorf("%w: gitlab address names no project", notifier.ErrInvalidConfig)
	}
	c, err := gitlab.NewClient(o.Token, gitlab.WithBaseURL(a.origin+"/api/v4"), gitlab.WithHTTPClient(o.HTTPClient))
	if err != nil {
		return nil, fmt.Errorf("%w: gitlab client: %w", notifier.ErrInvalidConfig, err)
	}
	return &gitLab{client: c, project: a.path}, nil
}

func (*gitLab) states() (string, string) { return string(gitlab.Success), string(gitlab.Failed) }

// latest lists the commit's statuses named key; without all=true GitLab
// answers with the last one of each name.
func (g *gitLab) latest(ctx context.Context, sha, key string) (status, bool, error) {
	statuses, _, err := g.client.Commits.GetCommitStatuses(g.project, sha,
		&gitlab.GetCommitStatusesOptions{Name: &key}, gitlab.WithContext(ctx))
	if err != nil {
		return status{}, false, err
	}
	for _, s := range statuses {
		if s.Name == key {
			return status{key: key, state: s.Status, description: s.Description}, true, nil
		}
	}
	return status{}, false, nil
}

func (g *gitLab) set(ctx context.Context, sha string, s status) error {
	_, _, err := g.client.Commits.SetCommitStatus(g.project, sha, &gitlab.SetCommitStatusOptions{
		State: gitlab.BuildStateValue(s.state), Name: &s.key, Description: &s.description,
	}, gitlab.WithContext(ctx))
	return err
}
