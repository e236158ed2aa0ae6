package githost

import (
	"context"
	"fmt"

	"code.gitea.io/sdk/gitea"

	"github.com/weir-gitops/weir/internal/notification/notifier"
)

// Gitea names one repository of a Gitea host's v1 API.
type Gitea struct {
	Owner, Repo string

	origin, token string
	opts          notifier.Options
}

// NewGitea returns o's repository. As in Flux, the Secret's token wins,
// its password stands in without one.
func NewGitea(o notifier.Options) (*Gitea, error) {
	token := o.Token
	if token == "" {
		token = o.Password
	}
	if token == "" {
		return nil, fmt.Errorf("%w: %s provider needs the token key in its secret", notifier.ErrInvalidConfig, o.Type)
	}
	a, owner, repo, err := ownerRepoOf(o)
	if err != nil {
		return nil, err
	}
	return &Gitea{Owner: owner, Repo: repo, origin: a.Origin, token: token, opts: o}, nil
}

// Client is made per call: the SDK binds a context at construction. The
// server's version is not asked for, so building costs no request.
func (g *Gitea) Client(ctx context.Context) (*gitea.Client, error) {
	c, err := gitea.NewClient(g.origin, gitea.SetToken(g.token), gitea.SetHTTPClient(httpClient(g.opts)),
		gitea.SetGiteaVersion(""), gitea.SetContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("gitea client: %w", err)
	}
	return c, nil
}

// WithStatus adds the answer's status to an SDK error, which gives only
// the server's message.
func WithStatus(resp *gitea.Response, err error) error {
	if err == nil || resp == nil || resp.Response == nil {
		return err
	}
	return fmt.Errorf("%s: %w", resp.Status, err)
}
