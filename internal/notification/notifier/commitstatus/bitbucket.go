package commitstatus

import (
	"context"
	"crypto/sha1" //nolint:gosec // a key Bitbucket caps at 40 characters, not a security measure.
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/weir-gitops/weir/internal/notification/notifier"
)

// bitbucketAPI is Bitbucket Cloud's API: one service, whatever the
// repository's address.
const bitbucketAPI = "https://api.bitbucket.org/2.0"

// bitbucketBuild is a build status of both Bitbucket APIs (Cloud's
// /commit/{sha}/statuses/build, Server's /commits/{sha}/builds).
type bitbucketBuild struct {
	State       string `json:"state"`
	Key         string `json:"key"`
	Name        string `json:"name,omitempty"`
	URL         string `json:"url"`
	Description string `json:"description"`
}

// bitbucketKey is the build key of a status key: Bitbucket takes at most
// 40 characters, so Flux sends the key's SHA-1.
func bitbucketKey(key string) string {
	sum := sha1.Sum([]byte(key)) //nolint:gosec // see the import.
	return hex.EncodeToString(sum[:])
}

// bitbucket sets build statuses on Bitbucket Cloud, authenticated with the
// Secret's token as "<username>:<app password>".
type bitbucket struct {
	api         apiClient
	base        string
	owner, repo string
	// link is the status's url: the repository, as the address names it.
	link string
}

func newBitbucket(o notifier.Options) (host, error) {
	user, pass, ok := strings.Cut(o.Token, ":")
	if !ok || user == "" || pass == "" {
		return nil, fmt.Errorf("%w: bitbucket provider needs the token key in its secret as <username>:<app password>",
			notifier.ErrInvalidConfig)
	}
	a, err := parseAddress(o.Address)
	if err != nil {
		return nil, err
	}
	owner, repo, err := a.ownerRepo("bitbucket")
	if err != nil {
		return nil, err
	}
	return &bitbucket{
		api:  apiClient{http: o.HTTPClient, auth: func(r *http.Request) { r.SetBasicAuth(user, pass) }},
		base: bitbucketAPI, owner: owner, repo: repo, link: a.origin + "/" + a.path,
	}, nil
}

func (*bitbucket) states() (string, string) { return "SUCCESSFUL", "FAILED" }

func (b *bitbucket) buildsURL(sha string) string {
	return fmt.Sprintf("%s/repositories/%s/%s/commit/%s/statuses/build", b.base,
		url.PathEscape(b.owner), url.PathEscape(b.repo), sha)
}

func (b *bitbucket) latest(ctx context.Context, sha, key string) (status, bool, error) {
	return readBuild(ctx, b.api, b.buildsURL(sha)+"/"+bitbucketKey(key), key)
}

func (b *bitbucket) set(ctx context.Context, sha string, s status) error {
	return postBuild(ctx, b.api, b.buildsURL(sha), b.link, s)
}

// readBuild reads the build status at u, the one set under key; a 404
// means none is.
func readBuild(ctx context.Context, api apiClient, u, key string) (status, bool, error) {
	var got bitbucketBuild
	err := api.do(ctx, http.MethodGet, u, "reading build status", nil, &got)
	if errors.Is(err, errNotFound) {
		return status{}, false, nil
	}
	if err != nil {
		return status{}, false, err
	}
	return status{key: key, name: got.Name, state: got.State, description: got.Description}, true, nil
}

// postBuild posts s to the builds collection at u, linking to link.
func postBuild(ctx context.Context, api apiClient, u, link string, s status) error {
	return api.do(ctx, http.MethodPost, u, "posting build status", bitbucketBuild{
		State: s.state, Key: bitbucketKey(s.key), Name: s.name, URL: link, Description: s.description,
	}, nil)
}
