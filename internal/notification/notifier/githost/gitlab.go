package githost

import (
	"fmt"

	gitlab "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/weir-gitops/weir/internal/notification/notifier"
)

// NewGitLab returns a client of GitLab's v4 API at the address's host,
// for gitlab.com and self-hosted instances alike, and the project: the
// address's path ("group/subgroup/project") or a numeric project ID.
func NewGitLab(o notifier.Options) (*gitlab.Client, string, error) {
	if err := RequireToken(o); err != nil {
		return nil, "", err
	}
	a, err := ParseAddress(o.Address)
	if err != nil {
		return nil, "", err
	}
	if a.Path == "" {
		return nil, "", fmt.Errorf("%w: %s address names no project", notifier.ErrInvalidConfig, o.Type)
	}
	c, err := gitlab.NewClient(o.Token, gitlab.WithBaseURL(a.Origin+"/api/v4"), gitlab.WithHTTPClient(httpClient(o)))
	if err != nil {
		return nil, "", fmt.Errorf("%w: gitlab client: %w", notifier.ErrInvalidConfig, err)
	}
	return c, a.Path, nil
}
