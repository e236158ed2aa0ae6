package gitcomment

import (
	"context"

	"github.com/google/go-github/v75/github"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/githost"
)

// gitHubThread comments on pull requests through GitHub's issue comments
// API: a pull request is an issue with the same number.
type gitHubThread struct {
	*githost.GitHub
}

func newGitHubThread(o notifier.Options) (thread, error) {
	g, err := githost.NewGitHub(o)
	if err != nil {
		return nil, err
	}
	return &gitHubThread{GitHub: g}, nil
}

func (g *gitHubThread) login(ctx context.Context) (string, error) { return g.Login(ctx) }
func (g *gitHubThread) secrets() []string                         { return g.Secrets() }

func (g *gitHubThread) list(ctx context.Context, n int64) ([]comment, error) {
	got, _, err := g.Client.Issues.ListComments(ctx, g.Owner, g.Repo, int(n), &github.IssueListCommentsOptions{
		Sort: github.Ptr("created"), Direction: github.Ptr("asc"), ListOptions: github.ListOptions{PerPage: listed},
	})
	if err != nil {
		return nil, err
	}
	out := make([]comment, 0, len(got))
	for _, c := range got {
		out = append(out, comment{id: c.GetID(), author: c.GetUser().GetLogin(), body: c.GetBody()})
	}
	return out, nil
}

func (g *gitHubThread) create(ctx context.Context, n int64, body string) error {
	_, _, err := g.Client.Issues.CreateComment(ctx, g.Owner, g.Repo, int(n), &github.IssueComment{Body: &body})
	return err
}

func (g *gitHubThread) edit(ctx context.Context, _, id int64, body string) error {
	_, _, err := g.Client.Issues.EditComment(ctx, g.Owner, g.Repo, id, &github.IssueComment{Body: &body})
	return err
}
