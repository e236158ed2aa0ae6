package commitstatus

import (
	"context"

	gitlab "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/githost"
)

// gitLab sets statuses through GitLab's v4 API (githost.NewGitLab).
type gitLab struct {
	client  *gitlab.Client
	project string
}

func newGitLab(o notifier.Options) (host, error) {
	c, project, err := githost.NewGitLab(o)
	if err != nil {
		return nil, err
	}
	return &gitLab{client: c, project: project}, nil
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
