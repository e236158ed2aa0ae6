package commitstatus

import (
	"context"
	"fmt"

	"code.gitea.io/sdk/gitea"

	"github.com/weir-gitops/weir/internal/notification/notifier"
)

// giteaHost sets statuses through Gitea's v1 API at the address's host.
type giteaHost struct {
	opts        notifier.Options
	origin      string
	owner, repo string
}

func newGitea(o notifier.Options) (host, error) {
	a, owner, repo, err := ownerRepoOf(o)
	if err != nil {
		return nil, err
	}
	return &giteaHost{opts: o, origin: a.origin, owner: owner, repo: repo}, nil
}

// client is made per call: the SDK binds a context at construction. The
// server's version is not asked for, so building costs no request.
func (g *giteaHost) client(ctx context.Context) (*gitea.Client, error) {
	c, err := gitea.NewClient(g.origin, gitea.SetToken(g.opts.Token), gitea.SetHTTPClient(g.opts.HTTPClient),
		gitea.SetGiteaVersion(""), gitea.SetContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("gitea client: %w", err)
	}
	return c, nil
}

func (*giteaHost) states() (string, string) {
	return string(gitea.StatusSuccess), string(gitea.StatusFailure)
}

// latest takes the first status with the key: Gitea lists the newest
// first.
func (g *giteaHost) latest(ctx context.Context, sha, key string) (status, bool, error) {
	c, err := g.client(ctx)
	if err != nil {
		return status{}, false, err
	}
	statuses, resp, err := c.ListStatuses(g.owner, g.repo, sha, gitea.ListStatusesOption{})
	if err != nil {
		return status{}, false, withStatus(resp, err)
	}
	for _, s := range statuses {
		if s.Context == key {
			return status{key: key, state: string(s.State), description: s.Description}, true, nil
		}
	}
	return status{}, false, nil
}

func (g *giteaHost) set(ctx context.Context, sha string, s status) error {
	c, err := g.client(ctx)
	if err != nil {
		return err
	}
	_, resp, err := c.CreateStatus(g.owner, g.repo, sha, gitea.CreateStatusOption{
		State: gitea.StatusState(s.state), Context: s.key, Description: s.description,
	})
	return withStatus(resp, err)
}

// withStatus adds the answer's status to an SDK error, which gives only
// the server's message.
func withStatus(resp *gitea.Response, err error) error {
	if err == nil || resp == nil || resp.Response == nil {
		return err
	}
	return fmt.Errorf("%s: %w", resp.Status, err)
}
