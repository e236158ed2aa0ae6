package gitprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Bitbucket Server's REST resources: the core API and the SSH access keys
// plugin's.
const (
	bitbucketAPI  = "/rest/api/1.0"
	bitbucketKeys = "/rest/keys/1.0"
)

// BitbucketServer is the REST API 1.0 of a Bitbucket Server or Data
// Center. It has no maintained Go client, so this one is written against
// the documented resources: repositories of a project (or of a user's
// personal project, key "~USER"), group permissions, and repository
// access keys (Bitbucket's deploy keys).
type BitbucketServer struct {
	hc     *http.Client
	origin string
	domain string
	token  string
}

// NewBitbucketServer returns the API of a.Hostname, authenticated with an
// HTTP access token (or personal access token) sent as a bearer token.
func NewBitbucketServer(a Address, token string) (*BitbucketServer, error) {
	if a.Hostname == "" {
		return nil, fmt.Errorf("invalid hostname %q", a.Hostname)
	}
	hc, err := a.httpClient()
	if err != nil {
		return nil, err
	}
	return &BitbucketServer{hc: hc, origin: a.origin(), domain: a.Hostname, token: token}, nil
}

// Domain implements Host.
func (b *BitbucketServer) Domain() string { return b.domain }

// bbsRepo is a repository as Bitbucket Server describes it.
type bbsRepo struct {
	ID          int64  `json:"id"`
	Slug        string `json:"slug"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Public      bool   `json:"public"`
	Links       struct {
		Clone []struct {
			Href string `json:"href"`
			Name string `json:"name"`
		} `json:"clone"`
		Self []struct {
			Href string `json:"href"`
		} `json:"self"`
	} `json:"links"`
}

// reposPath is the collection of ref's owner's repositories: a project's,
// or a user's personal ones.
func reposPath(ref RepoRef) string {
	if ref.Personal {
		return bitbucketAPI + "/users/" + url.PathEscape(ref.Owner) + "/repos"
	}
	return bitbucketAPI + "/projects/" + url.PathEscape(ref.Owner) + "/repos"
}

// projectRepoPath is ref under its project's key, "~USER" for a personal
// repository, as the permission and access key resources name it.
func projectRepoPath(prefix string, ref RepoRef) string {
	key := ref.Owner
	if ref.Personal {
		key = "~" + key
	}
	return prefix + "/projects/" + url.PathEscape(key) + "/repos/" + url.PathEscape(ref.Name)
}

// Repository implements Host.
func (b *BitbucketServer) Repository(ctx context.Context, ref RepoRef) (*Repository, error) {
	var r bbsRepo
	if err := b.do(ctx, http.MethodGet, reposPath(ref)+"/"+url.PathEscape(ref.Name), nil, nil, &r); err != nil {
		return nil, err
	}
	return bbsRepository(ref, &r)
}

// CreateRepository implements Host.
func (b *BitbucketServer) CreateRepository(ctx context.Context, ref RepoRef, s Settings) (*Repository, error) {
	body := map[string]any{"name": ref.Name, "scmId": "git", "forkable": true, "public": s.Visibility == "public"}
	if s.Description != "" {
		body["description"] = s.Description
	}
	if s.DefaultBranch != "" {
		body["defaultBranch"] = s.DefaultBranch
	}
	var r bbsRepo
	if err := b.do(ctx, http.MethodPost, reposPath(ref), nil, body, &r); err != nil {
		return nil, err
	}
	return bbsRepository(ref, &r)
}

// UpdateRepository implements Host: public access and description (the
// default branch has a resource of its own, which bootstrap leaves alone).
func (b *BitbucketServer) UpdateRepository(ctx context.Context, repo *Repository, s Settings) (*Repository, error) {
	body := map[string]any{}
	if s.Visibility != "" {
		body["public"] = s.Visibility == "public"
	}
	if s.Description != "" {
		body["description"] = s.Description
	}
	var r bbsRepo
	if err := b.do(ctx, http.MethodPut, reposPath(repo.Ref)+"/"+url.PathEscape(repo.Ref.Name), nil, body, &r); err != nil {
		return nil, err
	}
	return bbsRepository(repo.Ref, &r)
}

func bbsRepository(ref RepoRef, r *bbsRepo) (*Repository, error) {
	out := &Repository{Ref: ref, ID: r.ID, Description: r.Description, Visibility: "private"}
	if r.Public {
		out.Visibility = "public"
	}
	for _, c := range r.Links.Clone {
		switch c.Name {
		case "http", "https":
			out.HTTPURL = c.Href
		case "ssh":
			ssh, err := SSHURL(c.Href, "")
			if err != nil {
				return nil, err
			}
			out.SSHURL = ssh
		}
	}
	if len(r.Links.Self) > 0 {
		out.WebURL = r.Links.Self[0].Href
	}
	if out.HTTPURL == "" {
		return nil, fmt.Errorf("repository %q has no http clone link", ref)
	}
	return out, nil
}

// bbsPermissions maps flux's permission names to Bitbucket's repository
// permissions; bbsNames is the way back.
var (
	bbsPermissions = map[string]string{"pull": "REPO_READ", "triage": "REPO_READ", "push": "REPO_WRITE",
		"maintain": "REPO_WRITE", "admin": "REPO_ADMIN"}
	bbsNames = map[string]string{"REPO_READ": "pull", "REPO_WRITE": "push", "REPO_ADMIN": "admin"}
)

// TeamPermission implements Host: the group's explicit permission on the
// repository.
func (b *BitbucketServer) TeamPermission(ctx context.Context, repo *Repository, group string) (string, error) {
	var found string
	err := b.pages(ctx, projectRepoPath(bitbucketAPI, repo.Ref)+"/permissions/groups", url.Values{"filter": {group}},
		func(raw json.RawMessage) error {
			var p struct {
				Group struct {
					Name string `json:"name"`
				} `json:"group"`
				Permission string `json:"permission"`
			}
			if err := json.Unmarshal(raw, &p); err != nil {
				return err
			}
			if p.Group.Name == group {
				found = bbsNames[p.Permission]
			}
			return nil
		})
	return found, err
}

// GrantTeam implements Host.
func (b *BitbucketServer) GrantTeam(ctx context.Context, repo *Repository, group, permission string) error {
	perm, ok := bbsPermissions[permission]
	if !ok {
		return fmt.Errorf("permission %q has no Bitbucket Server equivalent", permission)
	}
	q := url.Values{"permission": {perm}, "name": {group}}
	return b.do(ctx, http.MethodPut, projectRepoPath(bitbucketAPI, repo.Ref)+"/permissions/groups", q, nil, nil)
}

// bbsKey is a repository access key.
type bbsKey struct {
	Key struct {
		ID    int64  `json:"id,omitempty"`
		Text  string `json:"text"`
		Label string `json:"label"`
	} `json:"key"`
	Permission string `json:"permission"`
}

// DeployKeys implements Host.
func (b *BitbucketServer) DeployKeys(ctx context.Context, repo *Repository) ([]DeployKey, error) {
	var out []DeployKey
	err := b.pages(ctx, projectRepoPath(bitbucketKeys, repo.Ref)+"/ssh", nil, func(raw json.RawMessage) error {
		var k bbsKey
		if err := json.Unmarshal(raw, &k); err != nil {
			return err
		}
		out = append(out, DeployKey{ID: k.Key.ID, Title: k.Key.Label, Key: k.Key.Text, ReadOnly: k.Permission == "REPO_READ"})
		return nil
	})
	return out, err
}

// AddDeployKey implements Host.
func (b *BitbucketServer) AddDeployKey(ctx context.Context, repo *Repository, key DeployKey) error {
	var k bbsKey
	k.Key.Text, k.Key.Label, k.Permission = key.Key, key.Title, "REPO_WRITE"
	if key.ReadOnly {
		k.Permission = "REPO_READ"
	}
	return b.do(ctx, http.MethodPost, projectRepoPath(bitbucketKeys, repo.Ref)+"/ssh", nil, k, nil)
}

// DeleteDeployKey implements Host.
func (b *BitbucketServer) DeleteDeployKey(ctx context.Context, repo *Repository, key DeployKey) error {
	path := projectRepoPath(bitbucketKeys, repo.Ref) + "/ssh/" + strconv.FormatInt(key.ID, 10)
	return b.do(ctx, http.MethodDelete, path, nil, nil, nil)
}

// pages calls each for every value of a paged collection, following
// nextPageStart until isLastPage.
func (b *BitbucketServer) pages(ctx context.Context, path string, q url.Values, each func(json.RawMessage) error) error {
	start := 0
	for {
		page := url.Values{"start": {strconv.Itoa(start)}, "limit": {"100"}}
		for k, v := range q {
			page[k] = v
		}
		var p struct {
			Values        []json.RawMessage `json:"values"`
			IsLastPage    bool              `json:"isLastPage"`
			NextPageStart int               `json:"nextPageStart"`
		}
		if err := b.do(ctx, http.MethodGet, path, page, nil, &p); err != nil {
			return err
		}
		for _, v := range p.Values {
			if err := each(v); err != nil {
				return fmt.Errorf("reading %s: %w", path, err)
			}
		}
		if p.IsLastPage || p.NextPageStart <= start {
			return nil
		}
		start = p.NextPageStart
	}
}

// do sends one request with the token and decodes a JSON answer into out.
func (b *BitbucketServer) do(ctx context.Context, method, path string, q url.Values, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	u := b.origin + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+b.token)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode >= http.StatusMultipleChoices {
		return bbsError(method, path, resp)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	return nil
}

// bbsError reads Bitbucket's error answer, {"errors":[{"message":…}]},
// and marks a 404 as ErrNotFound.
func bbsError(method, path string, resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e struct {
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	var msgs []string
	if json.Unmarshal(data, &e) == nil {
		for _, m := range e.Errors {
			msgs = append(msgs, m.Message)
		}
	}
	err := fmt.Errorf("%s %s: %s", method, path, resp.Status)
	if len(msgs) > 0 {
		err = fmt.Errorf("%w: %s", err, strings.Join(msgs, "; "))
	}
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}
