package commitstatus

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/weir-gitops/weir/internal/notification/notifier"
)

// bitbucketServer sets build statuses on Bitbucket Server and Data Center.
// The address is the repository's HTTPS clone URL,
// https://HOST[/CONTEXT]/scm/PROJECT/REPO.git; the API is under the same
// host and context. An HTTP access token (the Secret's token) is sent as a
// bearer token; otherwise username and password authenticate.
type bitbucketServer struct {
	api  apiClient
	base string
	link string
}

func newBitbucketServer(o notifier.Options) (host, error) {
	a, err := parseAddress(o.Address)
	if err != nil {
		return nil, err
	}
	prefix, repoPath, ok := strings.Cut("/"+a.path, "/scm/")
	if !ok {
		return nil, fmt.Errorf("%w: bitbucketserver address must be the HTTPS clone URL, .../scm/<project>/<repo>.git",
			notifier.ErrInvalidConfig)
	}
	project, repo, err := repoAddress{path: repoPath}.ownerRepo("bitbucketserver")
	if err != nil {
		return nil, err
	}
	var auth func(*http.Request)
	switch {
	case o.Token != "":
		token := o.Token
		auth = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
	case o.Username != "" && o.Password != "":
		user, pass := o.Username, o.Password
		auth = func(r *http.Request) { r.SetBasicAuth(user, pass) }
	default:
		return nil, fmt.Errorf("%w: bitbucketserver provider needs the token key in its secret, or a username and the password key",
			notifier.ErrInvalidConfig)
	}
	return &bitbucketServer{
		api: apiClient{http: o.HTTPClient, auth: auth},
		base: fmt.Sprintf("%s%s/rest/api/1.0/projects/%s/repos/%s", a.origin, prefix,
			url.PathEscape(project), url.PathEscape(repo)),
		link: o.Address,
	}, nil
}

func (*bitbucketServer) states() (string, string) { return "SUCCESSFUL", "FAILED" }

func (b *bitbucketServer) latest(ctx context.Context, sha, key string) (status, bool, error) {
	return readBuild(ctx, b.api, b.base+"/commits/"+sha+"/builds?key="+url.QueryEscape(bitbucketKey(key)), key)
}

func (b *bitbucketServer) set(ctx context.Context, sha string, s status) error {
	return postBuild(ctx, b.api, b.base+"/commits/"+sha+"/builds", b.link, s)
}
