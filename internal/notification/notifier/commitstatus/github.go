package commitstatus

import (
	"context"
	"fmt"

	"github.com/google/go-github/v75/github"

	"github.com/weir-gitops/weir/internal/notification/notifier"
)

// gitHubOrigin is the one address whose API is not at /api/v3: github.com
// is served by api.github.com.
const gitHubOrigin = "https://github.com"

// gitHub sets statuses through GitHub's REST API: api.github.com for
// github.com, https://HOST/api/v3 for GitHub Enterprise Server.
type gitHub struct {
	client      *github.Client
	owner, repo string
}

func newGitHub(o notifier.Options) (host, error) {
	a, owner, repo, err := ownerRepoOf(o)
	if err != nil {
		return nil, err
	}
	c := github.NewClient(o.HTTPClient).WithAuthToken(o.Token)
	if a.origin != gitHubOrigin {
		if c, err = c.WithEnterpriseURLs(a.origin, a.origin); err != nil {
			return nil, fmt.Errorf("%w: github enterprise address: %w", notifier.ErrInvalidConfig, err)
		}
	}
	return &gitHub{client: c, owner: owner, repo: repo}, nil
}

func (*gitHub) states() (string, string) { return "success", "failure" }

// latest reads the combined status, which holds the last status of each
// context: the list of all statuses grows with every post, and the one
// wanted may be pages away.
func (g *gitHub) latest(ctx context.Context, sha, key string) (status, bool, error) {
	opts := &github.ListOptions{PerPage: 100}
	for {
		combined, resp, err := g.client.Repositories.GetCombinedStatus(ctx, g.owner, g.repo, sha, opts)
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
	_, _, err := g.client.Repositories.CreateStatus(ctx, g.owner, g.repo, sha, &github.RepoStatus{
		State: &s.state, Context: &s.key, Description: &s.description,
	})
	return err
}
