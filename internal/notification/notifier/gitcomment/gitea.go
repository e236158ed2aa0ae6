package gitcomment

import (
	"context"
	"fmt"

	"code.gitea.io/sdk/gitea"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/githost"
)

// giteaThread comments on pull requests through Gitea's issue comments
// API: a pull request is an issue with the same index.
type giteaThread struct {
	*githost.Gitea
	opts notifier.Options
}

func newGiteaThread(o notifier.Options) (thread, error) {
	g, err := githost.NewGitea(o)
	if err != nil {
		return nil, err
	}
	return &giteaThread{Gitea: g, opts: o}, nil
}

func (g *giteaThread) secrets() []string { return g.opts.Secrets() }

func (g *giteaThread) login(ctx context.Context) (string, error) {
	c, err := g.Client(ctx)
	if err != nil {
		return "", err
	}
	u, resp, err := c.GetMyUserInfo()
	if err != nil {
		return "", fmt.Errorf("reading the authenticated user: %w", githost.WithStatus(resp, err))
	}
	return u.UserName, nil
}

func (g *giteaThread) list(ctx context.Context, n int64) ([]comment, error) {
	c, err := g.Client(ctx)
	if err != nil {
		return nil, err
	}
	got, resp, err := c.ListIssueComments(g.Owner, g.Repo, n, gitea.ListIssueCommentOptions{
		ListOptions: gitea.ListOptions{Page: 1, PageSize: listed},
	})
	if err != nil {
		return nil, githost.WithStatus(resp, err)
	}
	out := make([]comment, 0, len(got))
	for _, cm := range got {
		var author string
		if cm.Poster != nil {
			author = cm.Poster.UserName
		}
		out = append(out, comment{id: cm.ID, author: author, body: cm.Body})
	}
	return out, nil
}

func (g *giteaThread) create(ctx context.Context, n int64, body string) error {
	c, err := g.Client(ctx)
	if err != nil {
		return err
	}
	_, resp, err := c.CreateIssueComment(g.Owner, g.Repo, n, gitea.CreateIssueCommentOption{Body: body})
	return githost.WithStatus(resp, err)
}

func (g *giteaThread) edit(ctx context.Context, _, id int64, body string) error {
	c, err := g.Client(ctx)
	if err != nil {
		return err
	}
	_, resp, err := c.EditIssueComment(g.Owner, g.Repo, id, gitea.EditIssueCommentOption{Body: body})
	return githost.WithStatus(resp, err)
}
