package commitstatus

import (
	"context"

	"code.gitea.io/sdk/gitea"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/githost"
)

// giteaHost sets statuses through Gitea's v1 API at the address's host.
type giteaHost struct {
	*githost.Gitea
}

func newGitea(o notifier.Options) (host, error) {
	g, err := githost.NewGitea(o)
	if err != nil {
		return nil, err
	}
	return &giteaHost{Gitea: g}, nil
}

func (*giteaHost) states() (string, string) {
	return string(gitea.StatusSuccess), string(gitea.StatusFailure)
}

// latest takes the first status with the key: Gitea lists the newest
// first.
func (g *giteaHost) latest(ctx context.Context, sha, key string) (status, bool, error) {
	c, err := g.Client(ctx)
	if err != nil {
		return status{}, false, err
	}
	statuses, resp, err := c.ListStatuses(g.Owner, g.Repo, sha, gitea.ListStatusesOption{})
	if err != nil {
		return status{}, false, githost.WithStatus(resp, err)
	}
	for _, s := range statuses {
		if s.Context == key {
			return status{key: key, state: string(s.State), description: s.Description}, true, nil
		}
	}
	return status{}, false, nil
}

func (g *giteaHost) set(ctx context.Context, sha string, s status) error {
	c, err := g.Client(ctx)
	if err != nil {
		return err
	}
	_, resp, err := c.CreateStatus(g.Owner, g.Repo, sha, gitea.CreateStatusOption{
		State: gitea.StatusState(s.state), Context: s.key, Description: s.description,
	})
	return githost.WithStatus(resp, err)
}
