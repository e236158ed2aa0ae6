package githostserver

import (
	"net/http"
	"net/url"
	"strings"
)

// bitbucketErr answers Bitbucket Server's error body.
func bitbucketErr(w http.ResponseWriter, code int, msg, exception string) {
	writeJSON(w, code, map[string]any{"errors": []map[string]any{{"context": nil, "message": msg,
		"exceptionName": "com.atlassian.bitbucket." + exception}}})
}

// bitbucket answers Bitbucket Server's REST API 1.0 (/rest/api/1.0) and
// its SSH access keys resource (/rest/keys/1.0). Projects are Groups; a
// user's personal project is "~USER", its repositories also under
// /users/USER/repos. Groups given permissions are Teams.
func (s *Server) bitbucket(w http.ResponseWriter, r *http.Request, p []string, body map[string]any) {
	method := r.Method
	if len(p) < 4 || p[0] != "rest" || p[2] != "1.0" || (p[1] != "api" && p[1] != "keys") {
		bitbucketErr(w, http.StatusNotFound, "No resource at "+r.URL.Path, "rest.NoSuchResourceException")
		return
	}
	api, p := p[1], p[3:]
	owner, ok := s.bitbucketOwner(p)
	switch {
	case !ok:
		bitbucketErr(w, http.StatusNotFound, "Project "+strings.Join(p[1:min(2, len(p))], "")+" does not exist.", "project.NoSuchProjectException")
	case api == "api" && method == http.MethodPost && len(p) == 3:
		if s.repos[owner+"/"+str(body, "name")] != nil {
			bitbucketErr(w, http.StatusConflict, "This repository URL is already taken.", "repository.DuplicateRepositoryNameException")
			return
		}
		vis := "private"
		if boolean(body, "public") {
			vis = "public"
		}
		writeJSON(w, http.StatusCreated, s.bitbucketRepo(s.create(owner, str(body, "name"), vis, str(body, "description"), str(body, "defaultBranch"))))
	case len(p) >= 4:
		repo := s.repos[owner+"/"+p[3]]
		if repo == nil {
			bitbucketErr(w, http.StatusNotFound, "Repository "+p[3]+" does not exist.", "repository.NoSuchRepositoryException")
			return
		}
		if api == "keys" {
			s.bitbucketKeys(w, method, repo, p[4:], body)
			return
		}
		s.bitbucketRepoResource(w, r, repo, p[4:], body)
	default:
		bitbucketErr(w, http.StatusMethodNotAllowed, "Method "+method+" is not allowed here.", "rest.MethodNotAllowedException")
	}
}

// bitbucketOwner reads the owner of /projects/KEY/repos… or
// /users/USER/repos…: a project among Groups, or the token's user.
func (s *Server) bitbucketOwner(p []string) (string, bool) {
	if len(p) < 3 || p[2] != "repos" {
		return "", false
	}
	switch {
	case p[0] == "users" && strings.EqualFold(p[1], s.opts.User):
		return s.opts.User, true
	case p[0] == "projects" && strings.EqualFold(p[1], "~"+s.opts.User):
		return s.opts.User, true
	case p[0] == "projects" && s.hasGroup(p[1]):
		return p[1], true
	}
	return "", false
}

func (s *Server) bitbucketRepoResource(w http.ResponseWriter, r *http.Request, repo *Repo, rest []string, body map[string]any) {
	switch {
	case len(rest) == 0 && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.bitbucketRepo(repo))
	case len(rest) == 0 && r.Method == http.MethodPut:
		if v, ok := body["public"].(bool); ok {
			repo.Visibility = map[bool]string{true: "public", false: "private"}[v]
		}
		if d := str(body, "description"); d != "" {
			repo.Description = d
		}
		writeJSON(w, http.StatusOK, s.bitbucketRepo(repo))
	case match(rest, "permissions", "groups") && r.Method == http.MethodGet:
		filter := r.URL.Query().Get("filter")
		var values []any
		for _, g := range sortedKeys(repo.Teams) {
			if strings.Contains(g, filter) {
				values = append(values, map[string]any{"group": map[string]any{"name": g}, "permission": repo.Teams[g]})
			}
		}
		writeJSON(w, http.StatusOK, bitbucketPage(values))
	case match(rest, "permissions", "groups") && r.Method == http.MethodPut:
		s.bitbucketGrant(w, repo, r.URL.Query())
	default:
		bitbucketErr(w, http.StatusNotFound, "No resource at "+r.URL.Path, "rest.NoSuchResourceException")
	}
}

func (s *Server) bitbucketGrant(w http.ResponseWriter, repo *Repo, q url.Values) {
	name, perm := q.Get("name"), q.Get("permission")
	switch {
	case perm != "REPO_READ" && perm != "REPO_WRITE" && perm != "REPO_ADMIN":
		bitbucketErr(w, http.StatusBadRequest, "The permission "+perm+" is not a repository permission.", "permission.InvalidPermissionException")
	case !s.hasTeam(name):
		bitbucketErr(w, http.StatusNotFound, "No group exists with the name "+name+".", "user.NoSuchGroupException")
	default:
		repo.Teams[name] = perm
		w.WriteHeader(http.StatusNoContent)
	}
}

// bitbucketKeys answers a repository's access keys.
func (s *Server) bitbucketKeys(w http.ResponseWriter, method string, repo *Repo, rest []string, body map[string]any) {
	keyJSON := func(k Key) map[string]any {
		perm := "REPO_WRITE"
		if k.ReadOnly {
			perm = "REPO_READ"
		}
		return map[string]any{"key": map[string]any{"id": k.ID, "text": k.Key, "label": k.Title},
			"repository": map[string]any{"id": repo.ID, "slug": repo.Name}, "permission": perm}
	}
	switch {
	case match(rest, "ssh") && method == http.MethodGet:
		var values []any
		for _, k := range repo.Keys {
			values = append(values, keyJSON(k))
		}
		writeJSON(w, http.StatusOK, bitbucketPage(values))
	case match(rest, "ssh") && method == http.MethodPost:
		key, _ := body["key"].(map[string]any)
		perm := str(body, "permission")
		if perm != "REPO_READ" && perm != "REPO_WRITE" {
			bitbucketErr(w, http.StatusBadRequest, "An access key's permission is REPO_READ or REPO_WRITE.", "permission.InvalidPermissionException")
			return
		}
		writeJSON(w, http.StatusCreated, keyJSON(s.addKey(repo, str(key, "label"), str(key, "text"), perm == "REPO_READ")))
	case match(rest, "ssh", "*") && method == http.MethodDelete && s.deleteKey(repo, rest[1]):
		w.WriteHeader(http.StatusNoContent)
	default:
		bitbucketErr(w, http.StatusNotFound, "No such access key.", "ssh.NoSuchAccessKeyException")
	}
}

// bitbucketPage is a one-page answer of a paged collection.
func bitbucketPage(values []any) map[string]any {
	if values == nil {
		values = []any{}
	}
	return map[string]any{"size": len(values), "limit": 100, "start": 0, "isLastPage": true, "values": values}
}

func (s *Server) bitbucketRepo(r *Repo) map[string]any {
	httpURL, sshURL := s.cloneURLs(r)
	project := map[string]any{"key": r.Owner, "type": "NORMAL"}
	self := "https://" + s.Hostname + "/projects/" + r.Owner + "/repos/" + r.Name + "/browse"
	if r.Owner == s.opts.User {
		project = map[string]any{"key": "~" + strings.ToUpper(r.Owner), "type": "PERSONAL"}
		self = "https://" + s.Hostname + "/users/" + r.Owner + "/repos/" + r.Name + "/browse"
	}
	return map[string]any{
		"id": r.ID, "slug": r.Name, "name": r.Name, "description": r.Description, "scmId": "git",
		"state": "AVAILABLE", "forkable": true, "public": r.Visibility == "public", "project": project,
		"links": map[string]any{
			"clone": []map[string]any{{"href": httpURL, "name": "http"}, {"href": sshURL, "name": "ssh"}},
			"self":  []map[string]any{{"href": self}},
		},
	}
}
