package gitcomment

import (
	"context"
	"fmt"

	gitlab "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/githost"
)

// gitLabThread comments on merge requests through GitLab's notes API; the
// request's number is its IID.
type gitLabThread struct {
	client  *gitlab.Client
	project string
	opts    notifier.Options
}

func newGitLabThread(o notifier.Options) (thread, error) {
	c, project, err := githost.NewGitLab(o)
	if err != nil {
		return nil, err
	}
	return &gitLabThread{client: c, project: project, opts: o}, nil
}

func (g *gitLabThread) secrets() []string { return g.opts.Secrets() }

func (g *gitLabThread) login(ctx context.Context) (string, error) {
	u, _, err := g.client.Users.CurrentUser(gitlab.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("reading the authenticated user: %w", err)
	}
	return u.Username, nil
}

func (g *gitLabThread) list(ctx context.Context, n int64) ([]comment, error) {
	notes, _, err := g.client.Notes.ListMergeRequestNotes(g.project, n, &gitlab.ListMergeRequestNotesOptions{
		OrderBy: gitlab.Ptr("created_at"), Sort: gitlab.Ptr("asc"), ListOptions: gitlab.ListOptions{PerPage: listed},
	}, gitlab.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]comment, 0, len(notes))
	for _, c := range notes {
		out = append(out, comment{id: c.ID, author: c.Author.Username, body: c.Body})
	}
	return out, nil
}

func (g *gitLabThread) create(ctx context.Context, n int64, body string) error {
	_, _, err := g.client.Notes.CreateMergeRequestNote(g.project, n, &gitlab.CreateMergeRequestNoteOptions{Body: &body},
		gitlab.WithContext(ctx))
	return err
}

func (g *gitLabThread) edit(ctx context.Context, n, id int64, body string) error {
	_, _, err := g.client.Notes.UpdateMergeRequestNote(g.project, n, id, &gitlab.UpdateMergeRequestNoteOptions{Body: &body},
		gitlab.WithContext(ctx))
	return err
}
