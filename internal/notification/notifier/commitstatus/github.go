package commitstatus

import (
	"context"

	"github.com/google/go-github/v75/github"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/githost"
)

// gitHub sets statuses through GitHub's REST API (githost.GitHub), with
// a token or as a GitHub App installation.
type gitHub struct {
	*githost.GitHub
}

func newGitHub(o notifier.Options) (host, error) {
	g, err := githost.NewGitHub(o)
	if err != nil {
		return nil, err
	}
	return &gitHub{GitHub: g}, nil
}

func (*gitHub) states() (string, string) { return "success", "failure" }

// secrets include the installation tokens an App was handed.
func (g *gitHub) secrets() []string { return g.Secrets() }

// latest reads the combined status, which holds the last status of each
// context: the list of all statuses grows with every post, and the one
// wanted may be pages away.
func (g *gitHub) latest(ctx context.Context, sha, key string) (status, bool, error) {
	opts := &github.ListOptions{PerPage: 100}
	for {
		combined, resp, err := g.Client.Repositories.GetCombinedStatus(ctx, g.Owner, g.Repo, sha, opts)
		if err != nil {
			return status{}, false, err
		}
		for _, s := range combined.Statuses {
			if s.GetContext() == key {
				return status{key: key, state: s.GetState(), description: s.GetDescription()}, true, nil
			}
		}
		if resp.NextPage == 0 {
			return status{}, false, nil
		}
		opts.Page = resp.NextPage
	}
}

func (g *gitHub) set(ctx context.Context, sha string, s status) error {
	_, _, err := g.Client.Repositories.CreateStatus(ctx, g.Owner, g.Repo, sha, &github.RepoStatus{
		State: &s.state, Context: &s.key, Description: &s.description,
	})
	return err
}
